package protocol

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Requests that vary (loadgen run's URL, -H, --body and --targets): a
// text with fields, compiled once into literal and field parts, and
// rendered per request into a buffer the connection keeps. The fields:
//
//	{{seq}}        the run's sequence number: 1, 2, 3 … across all connections
//	{{uuid}}       a random (version 4) UUID, a new one at each field
//	{{rand N}}     a random whole number from 0 to N-1, a new one at each field
//	{{now}}        the time of the request, in Unix milliseconds
//	{{row.COLUMN}} the COLUMN of the feed's next row (--feed FILE, a CSV)
//	{{"TEXT"}}     TEXT as written: how a literal "{{" is sent
//
// Spaces inside the braces are allowed ({{ seq }}). All the fields of one
// request share its seq, its row and its now; each request takes the next
// seq (if it has a {{seq}}) and the next row (if it has a {{row.…}}).

// Template is a text compiled: its literal and field parts.
type Template struct {
	parts []tpart
	uses  Uses
}

// Uses says which shared values a template takes per request.
type Uses uint8

// What a template takes: a sequence number, a feed's row, the time.
const (
	UsesSeq Uses = 1 << iota
	UsesRow
	UsesNow
)

type fieldKind uint8

const (
	fLiteral fieldKind = iota
	fSeq
	fUUID
	fRand
	fNow
	fRow
)

type tpart struct {
	kind fieldKind
	lit  string // fLiteral
	n    uint64 // fRand: N
	col  int    // fRow: the column's index
}

// MaxRand is the largest N of {{rand N}}.
const MaxRand = 1 << 62

// LiteralTemplate is a template of s as it is, fields or not.
func LiteralTemplate(s string) *Template {
	t := &Template{}
	t.lit(s)
	return t
}

// HasTemplate tells whether s holds a field's opening braces: a text
// without them is sent as it is.
func HasTemplate(s string) bool { return strings.Contains(s, "{{") }

// BodyHasTemplate tells whether a body holds fields: a body that is
// not UTF-8 text is sent as it is, whatever bytes it holds.
func BodyHasTemplate(b []byte) bool { return HasTemplate(string(b)) && utf8.Valid(b) }

// ParseTemplate compiles s. feed gives the columns {{row.COLUMN}} may
// name; nil when there is no feed. The error says which field is wrong
// and why, in one line.
func ParseTemplate(s string, feed *Feed) (*Template, error) {
	t := &Template{}
	for s != "" {
		i := strings.Index(s, "{{")
		if i < 0 {
			t.lit(s)
			break
		}
		t.lit(s[:i])
		s = s[i+2:]
		end := fieldEnd(s)
		if end < 0 {
			return nil, fmt.Errorf("%s is not closed: want }} after it", quoteField("{{"+s))
		}
		p, err := parseField(s[:end], feed)
		if err != nil {
			return nil, err
		}
		if p.kind == fLiteral {
			t.lit(p.lit)
		} else {
			t.parts = append(t.parts, p)
			switch p.kind {
			case fSeq:
				t.uses |= UsesSeq
			case fRow:
				t.uses |= UsesRow
			case fNow:
				t.uses |= UsesNow
			}
		}
		s = s[end+2:]
	}
	return t, nil
}

// fieldEnd is where the field at the start of s ends (its "}}"), or -1: a
// quoted string may hold braces.
func fieldEnd(s string) int {
	in := false
	for i := 0; i < len(s); i++ {
		switch {
		case in && s[i] == '\\':
			i++
		case s[i] == '"':
			in = !in
		case !in && s[i] == '}' && i+1 < len(s) && s[i+1] == '}':
			return i
		case !in && s[i] == '{' && i+1 < len(s) && s[i+1] == '{':
			return -1 // a field does not hold another
		}
	}
	return -1
}

func (t *Template) lit(s string) {
	if s == "" {
		return
	}
	if n := len(t.parts); n > 0 && t.parts[n-1].kind == fLiteral {
		t.parts[n-1].lit += s
		return
	}
	t.parts = append(t.parts, tpart{kind: fLiteral, lit: s})
}

// parseField reads the inside of one {{…}}.
func parseField(f string, feed *Feed) (tpart, error) {
	body := strings.TrimSpace(f)
	name, arg, _ := strings.Cut(body, " ")
	arg = strings.TrimSpace(arg)
	bad := quoteField("{{" + f + "}}")
	switch {
	case body == "":
		return tpart{}, fmt.Errorf("%s is empty: want {{seq}}, {{uuid}}, {{rand N}}, {{now}} or {{row.COLUMN}}", bad)
	case body[0] == '"':
		v, err := strconv.Unquote(body)
		if err != nil {
			return tpart{}, fmt.Errorf("%s: a malformed quoted text", bad)
		}
		return tpart{kind: fLiteral, lit: v}, nil
	case name == "rand":
		n, err := strconv.ParseUint(arg, 10, 64)
		if arg == "" || err != nil || n < 1 || n > MaxRand {
			return tpart{}, fmt.Errorf("%s: want {{rand N}}, N a whole number from 1 to %d (the values are 0 to N-1)", bad, uint64(MaxRand))
		}
		return tpart{kind: fRand, n: n}, nil
	case arg != "":
		return tpart{}, fmt.Errorf("%s: %s takes no argument", bad, name)
	case name == "seq":
		return tpart{kind: fSeq}, nil
	case name == "uuid":
		return tpart{kind: fUUID}, nil
	case name == "now":
		return tpart{kind: fNow}, nil
	case strings.HasPrefix(name, "row."):
		col := name[len("row."):]
		if feed == nil {
			return tpart{}, fmt.Errorf("%s takes a column of a CSV file: give one with --feed FILE", bad)
		}
		i := feed.Column(col)
		if i < 0 {
			return tpart{}, fmt.Errorf("%s: %s has no column %q (its columns: %s)", bad, feed.Name, col, strings.Join(feed.Columns, ", "))
		}
		return tpart{kind: fRow, col: i}, nil
	}
	return tpart{}, fmt.Errorf("%s: unknown field %q: want {{seq}}, {{uuid}}, {{rand N}}, {{now}}, {{row.COLUMN}} or {{\"TEXT\"}}", bad, name)
}

// quoteField quotes a field for an error, cut at 60 bytes.
func quoteField(s string) string {
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return strconv.Quote(s)
}

// Static tells that t has no field: it renders as one text, always.
func (t *Template) Static() bool {
	return len(t.parts) == 0 || len(t.parts) == 1 && t.parts[0].kind == fLiteral
}

// Literal is t's literal parts, its fields left out.
func (t *Template) Literal() string {
	var b strings.Builder
	for _, p := range t.parts {
		b.WriteString(p.lit)
	}
	return b.String()
}

// Uses tells which shared values t takes per request.
func (t *Template) Uses() Uses { return t.uses }

// Columns are the feed's columns t names, by their index.
func (t *Template) Columns() []int {
	var cols []int
	for _, p := range t.parts {
		if p.kind == fRow {
			cols = append(cols, p.col)
		}
	}
	return cols
}

// Append renders t with the values of one request and appends it to b.
// It allocates only when b has no room left.
func (t *Template) Append(b []byte, d *Draw) []byte {
	for i := range t.parts {
		p := &t.parts[i]
		switch p.kind {
		case fLiteral:
			b = append(b, p.lit...)
		case fSeq:
			b = strconv.AppendUint(b, d.Seq, 10)
		case fUUID:
			b = appendUUID(b, rand.Uint64(), rand.Uint64())
		case fRand:
			b = strconv.AppendUint(b, rand.Uint64N(p.n), 10)
		case fNow:
			b = strconv.AppendInt(b, d.Now, 10)
		case fRow:
			b = append(b, d.Row[p.col]...)
		}
	}
	return b
}

// Sample renders t with placeholder values (seq 1, the first row, zeros):
// what a URL's checks parse.
func (t *Template) Sample(feed *Feed) string {
	d := Draw{Seq: 1}
	if feed != nil && len(feed.rows) > 0 {
		d.Row = feed.rows[0]
	}
	return string(t.Append(nil, &d))
}

const hexDigits = "0123456789abcdef"

// appendUUID appends a version 4 UUID (RFC 9562) made of hi and lo.
func appendUUID(b []byte, hi, lo uint64) []byte {
	hi = hi&^0xf000 | 0x4000         // version 4
	lo = lo&^(0xc<<60) | (0x8 << 60) // variant 10
	var u [16]byte
	for i := 0; i < 8; i++ {
		u[i] = byte(hi >> (56 - 8*i))
		u[8+i] = byte(lo >> (56 - 8*i))
	}
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return b
}

// Vars are the values the requests of one run share: its sequence and
// its feed's next row. Safe for concurrent use.
type Vars struct {
	seq  atomic.Uint64
	feed *Feed
}

// NewVars starts a run's values; feed may be nil.
func NewVars(feed *Feed) *Vars { return &Vars{feed: feed} }

// Draw is the values of one request: all its fields share them.
type Draw struct {
	Seq uint64
	Row []string
	Now int64 // Unix milliseconds
}

// Draw takes one request's values: the next seq and the next row, each
// only if the request uses it, so that what a target sees has no gap.
func (v *Vars) Draw(u Uses) Draw {
	var d Draw
	if u&UsesSeq != 0 {
		d.Seq = v.seq.Add(1)
	}
	if u&UsesRow != 0 {
		d.Row = v.feed.next()
	}
	if u&UsesNow != 0 {
		d.Now = time.Now().UnixMilli()
	}
	return d
}

// ErrNoFeedRows is the error of a feed with a header and no row.
var ErrNoFeedRows = errors.New("no row under the header line")
