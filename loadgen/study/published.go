package study

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// publishedJSON holds every study's published figures, each with its
// source: the data of the studies' tables, kept apart from the code.
//
//go:embed published.json
var publishedJSON []byte

// Published is one study's published figures and where they were
// published.
type Published struct {
	Study   string           `json:"study"`
	Sources []Source         `json:"sources"`
	Tables  []PublishedTable `json:"tables"`
}

// Source is where published figures come from, told so that anyone can
// find it: who published it, its title, when, and its address (a URL) or
// another identifier of the document (a bug number, a file in a
// repository); and what it states, in words.
type Source struct {
	Key       string `json:"key"` // what tables and rows call it
	Author    string `json:"author,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	Title     string `json:"title"`
	Date      string `json:"date,omitempty"`
	URL       string `json:"url,omitempty"`
	ID        string `json:"id,omitempty"`
	// States is what the source states that the tables record.
	States string `json:"states"`
	// Checked says how the recorded figures were checked against the
	// source: read there, or taken as quoted because it could not be opened.
	Checked string `json:"checked"`
}

// Findable tells whether the source has an address or an identifier: a
// table with published figures needs one.
func (s Source) Findable() bool { return s.URL != "" || s.ID != "" }

// Line is the source in one line: author, "title", publisher, date, then
// its URL and identifier.
func (s Source) Line() string {
	var parts []string
	if s.Author != "" {
		parts = append(parts, s.Author)
	}
	parts = append(parts, `"`+s.Title+`"`)
	if s.Publisher != "" {
		parts = append(parts, s.Publisher)
	}
	if s.Date != "" {
		parts = append(parts, s.Date)
	}
	line := strings.Join(parts, ", ")
	switch {
	case s.URL != "" && s.ID != "":
		line += ": " + s.URL + " (" + s.ID + ")"
	case s.URL != "":
		line += ": " + s.URL
	case s.ID != "":
		line += ": " + s.ID
	}
	var missing []string
	if !s.Findable() {
		missing = append(missing, "address")
	}
	if s.Author == "" && s.Publisher == "" {
		missing = append(missing, "publisher")
	}
	if s.Date == "" {
		missing = append(missing, "date")
	}
	switch len(missing) {
	case 0:
	case 1:
		line += " (" + missing[0] + " not recorded)"
	default:
		line += " (" + strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1] + " not recorded)"
	}
	return line
}

// PublishedTable is one table of a study: a metric over rows (CNIs,
// backends, CPU counts, meshes), the row every ratio is taken to, and the
// orderings the study concluded.
type PublishedTable struct {
	Metric   string `json:"metric"`
	Unit     string `json:"unit"`
	Kind     Kind   `json:"kind"`
	Baseline string `json:"baseline"` // a row key
	// Source is the key of the study's source the table's figures come
	// from. A table whose source cannot be named says why in Unsourced
	// instead, and every output marks it so (loadgen report leaves it out).
	Source    string `json:"source,omitempty"`
	Unsourced string `json:"unsourced,omitempty"`
	// Payload and Rung pick the cell of a sweep the sweep kinds read
	// (bytes, c16t16); 0 and "" are the sweep's smallest payload and
	// fewest connections.
	Payload int            `json:"payload,omitempty"`
	Rung    string         `json:"rung,omitempty"`
	Rows    []PublishedRow `json:"rows"`
	// Orderings are pairs [a, b]: the study found a below b.
	Orderings [][2]string `json:"orderings,omitempty"`
	// About are pairs the study found about the same.
	About [][2]string `json:"about,omitempty"`
}

// PublishedRow is one published figure and where we measure its match.
type PublishedRow struct {
	Key string `json:"key"`
	// Value is the published figure; nil for a row the study published
	// only in an ordering, or for one of ours alone (a local sidecar).
	Value *float64 `json:"value,omitempty"`
	// Measure names what of ours it is compared with: a lab path
	// MODE.PATH, a worker count for the sizing kinds, or DIR:PATH for the
	// sweep kinds (the sweep in the study's directory DIR, * for any, and
	// its path; * alone for a sweep's own baseline path); "" when nothing
	// here can measure it.
	Measure string `json:"measure,omitempty"`
	Note    string `json:"note,omitempty"`
	// Source is the key of the row's source when it is not its table's.
	Source string `json:"source,omitempty"`
	// SamePathAs names the row whose datapath this row's measure is on
	// this machine (on one node, IPIP encapsulates nothing: the same
	// routed veths as host-gw): an ordering between the two cannot be
	// told here, whatever the figures.
	SamePathAs string `json:"same_path_as,omitempty"`
}

// Kind is what a table's figure is, and so how it is read from results.
type Kind string

const (
	Gbps Kind = "gbps"   // tcp-stream Gbit/s of a lab path
	RRus Kind = "rr_us"  // tcp-rr mean latency of a lab path, µs
	CRRs Kind = "crr_us" // tcp-crr mean latency of a lab path, µs
	Msgs Kind = "msgs"   // grpc-stream ping-pongs/s × 2 of a lab path
	RPS  Kind = "rps"    // keep-alive requests/s per nginx worker count
	TPS  Kind = "tps"    // TLS handshakes/s per nginx worker count

	// The sweep kinds: a path of a sweep (DIR:PATH), at the table's
	// payload and rung.
	ProxyCPU    Kind = "proxy_cpu_1k"      // the watched proxies' vCPU per 1000 requests/s, summed
	ProxyMem    Kind = "proxy_mem_mib"     // the watched proxies' mean memory, MiB, summed
	ProxyMemMax Kind = "proxy_mem_max_mib" // the largest watched proxy's peak memory, MiB
	RPSRatio    Kind = "rps_ratio"         // requests/s over the sweep's baseline path's
	P50Ratio    Kind = "p50_ratio"         // median latency over the sweep's baseline path's
	AddedP50    Kind = "added_p50_ms"      // median latency less the sweep's baseline path's, ms
)

var kinds = []Kind{Gbps, RRus, CRRs, Msgs, RPS, TPS, ProxyCPU, ProxyMem, ProxyMemMax, RPSRatio, P50Ratio, AddedP50}

// sweepKind tells whether k reads a sweep's path (DIR:PATH).
func (k Kind) sweepKind() bool {
	switch k {
	case ProxyCPU, ProxyMem, ProxyMemMax, RPSRatio, P50Ratio, AddedP50:
		return true
	}
	return false
}

var (
	loadOnce  sync.Once
	published map[string]Published
	loadErr   error
)

// PublishedFor returns the published figures of a study; ok is false when
// the repository holds none for it.
func PublishedFor(study string) (Published, bool, error) {
	loadOnce.Do(func() { published, loadErr = parsePublished(publishedJSON) })
	if loadErr != nil {
		return Published{}, false, loadErr
	}
	p, ok := published[study]
	return p, ok, nil
}

// SourceOf is the source of a key, ok false when the study has none by
// that key.
func (p Published) SourceOf(key string) (Source, bool) {
	i := slices.IndexFunc(p.Sources, func(s Source) bool { return s.Key == key })
	if i < 0 {
		return Source{}, false
	}
	return p.Sources[i], true
}

// TableSources are the sources a table's figures come from: its own
// first, then its rows' others, each once. Empty for an unsourced table.
func (p Published) TableSources(t PublishedTable) []Source {
	if t.Unsourced != "" {
		return nil
	}
	var out []Source
	add := func(key string) {
		if key == "" || slices.ContainsFunc(out, func(s Source) bool { return s.Key == key }) {
			return
		}
		if s, ok := p.SourceOf(key); ok {
			out = append(out, s)
		}
	}
	add(t.Source)
	for _, r := range t.Rows {
		add(r.Source)
	}
	return out
}

// parsePublished reads and checks the published figures strictly: every
// table names its source (or says why it has none), every source can be
// found, every baseline, ordering and same-path mark names a row of its
// table.
func parsePublished(b []byte) (map[string]Published, error) {
	var doc struct {
		Studies []Published `json:"studies"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("published figures: %w", err)
	}
	out := map[string]Published{}
	for _, s := range doc.Studies {
		if err := checkStudy(s); err != nil {
			return nil, fmt.Errorf("published figures of %s: %w", s.Study, err)
		}
		out[s.Study] = s
	}
	return out, nil
}

func checkStudy(s Published) error {
	keys := map[string]bool{}
	for _, src := range s.Sources {
		switch {
		case src.Key == "" || keys[src.Key]:
			return fmt.Errorf("source %q: no key, or the key twice", src.Key)
		case strings.TrimSpace(src.Title) == "":
			return fmt.Errorf("source %s: no title", src.Key)
		case strings.TrimSpace(src.States) == "" || strings.TrimSpace(src.Checked) == "":
			return fmt.Errorf("source %s: what it states, and how that was checked, are not recorded", src.Key)
		}
		keys[src.Key] = true
	}
	if len(s.Tables) == 0 {
		return fmt.Errorf("no tables")
	}
	for _, t := range s.Tables {
		if err := checkTable(s, t, keys); err != nil {
			return fmt.Errorf("%s: %w", t.Metric, err)
		}
	}
	return nil
}

func checkTable(s Published, t PublishedTable, sources map[string]bool) error {
	if !slices.Contains(kinds, t.Kind) {
		return fmt.Errorf("no kind %q", t.Kind)
	}
	switch {
	case (t.Source == "") == (t.Unsourced == ""):
		return fmt.Errorf("want a source or, for a table whose source cannot be named, why (unsourced)")
	case t.Source != "" && !sources[t.Source]:
		return fmt.Errorf("source %q is not one of the study's", t.Source)
	}
	rows := map[string]bool{}
	for _, r := range t.Rows {
		if r.Key == "" || rows[r.Key] || (r.Value != nil && *r.Value <= 0) {
			return fmt.Errorf("row %q: no key, twice, or a figure not positive", r.Key)
		}
		if r.Source != "" && (!sources[r.Source] || t.Unsourced != "") {
			return fmt.Errorf("row %s: source %q is not one of the study's", r.Key, r.Source)
		}
		if t.Kind.sweepKind() && r.Measure != "" && r.Measure != "*" && !strings.Contains(r.Measure, ":") {
			return fmt.Errorf("row %s: a %s row is measured as DIR:PATH, not %q", r.Key, t.Kind, r.Measure)
		}
		rows[r.Key] = true
	}
	if !rows[t.Baseline] {
		return fmt.Errorf("baseline %q is not a row", t.Baseline)
	}
	for _, r := range t.Rows {
		if r.SamePathAs != "" && (!rows[r.SamePathAs] || r.SamePathAs == r.Key) {
			return fmt.Errorf("row %s: same_path_as %q is not another row", r.Key, r.SamePathAs)
		}
	}
	for _, o := range slices.Concat(t.Orderings, t.About) {
		if !rows[o[0]] || !rows[o[1]] || o[0] == o[1] {
			return fmt.Errorf("ordering %v names no row, or one row twice", o)
		}
	}
	// A published figure must be findable: its source has an address or
	// an identifier. A source with neither can carry orderings only.
	for _, src := range s.TableSources(t) {
		if src.Findable() {
			continue
		}
		for _, r := range t.Rows {
			if r.Value != nil && (r.Source == src.Key || (r.Source == "" && t.Source == src.Key)) {
				return fmt.Errorf("row %s: a published figure whose source %s has no URL or identifier", r.Key, src.Key)
			}
		}
	}
	return nil
}
