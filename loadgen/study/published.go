package study

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

// publishedJSON holds every study's published figures, each with its
// source: the data of the studies' tables, kept apart from the code.
//
//go:embed published.json
var publishedJSON []byte

// Published is one study's published figures.
type Published struct {
	Study  string           `json:"study"`
	Source string           `json:"source"`
	Tables []PublishedTable `json:"tables"`
}

// PublishedTable is one table of a study: a metric over rows (CNIs,
// backends, CPU counts), the row every ratio is taken to, and the
// orderings the study concluded.
type PublishedTable struct {
	Metric   string         `json:"metric"`
	Unit     string         `json:"unit"`
	Kind     Kind           `json:"kind"`
	Baseline string         `json:"baseline"` // a row key
	Rows     []PublishedRow `json:"rows"`
	// Orderings are pairs [a, b]: the study found a below b.
	Orderings [][2]string `json:"orderings"`
}

// PublishedRow is one published figure and where we measure its match.
type PublishedRow struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
	// Measure names what of ours it is compared with: a lab path MODE.PATH,
	// or a worker count for the sizing kinds; "" when nothing here can
	// measure it.
	Measure string `json:"measure,omitempty"`
	Note    string `json:"note,omitempty"`
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
)

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

// parsePublished reads and checks the published figures strictly: every
// baseline and ordering names a row of its table.
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
		if s.Source == "" {
			return nil, fmt.Errorf("published figures of %s: no source", s.Study)
		}
		for _, t := range s.Tables {
			keys := map[string]bool{}
			for _, r := range t.Rows {
				if keys[r.Key] || r.Value <= 0 {
					return nil, fmt.Errorf("published figures of %s, %s: row %q twice or not positive", s.Study, t.Metric, r.Key)
				}
				keys[r.Key] = true
			}
			if !keys[t.Baseline] {
				return nil, fmt.Errorf("published figures of %s, %s: baseline %q is not a row", s.Study, t.Metric, t.Baseline)
			}
			for _, o := range t.Orderings {
				if !keys[o[0]] || !keys[o[1]] {
					return nil, fmt.Errorf("published figures of %s, %s: ordering %v names no row", s.Study, t.Metric, o)
				}
			}
		}
		out[s.Study] = s
	}
	return out, nil
}
