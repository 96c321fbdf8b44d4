package protocol

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// Feed is a CSV file's rows for {{row.COLUMN}} (loadgen run --feed FILE,
// as k6's SharedArray or Gatling's feeders): its first line names the
// columns; requests take the rows in order, one each, and start again
// after the last. Read once, shared read-only by every connection.
type Feed struct {
	Name    string   // the file, as given (errors start with it)
	Columns []string // from the header line
	rows    [][]string
	cursor  atomic.Uint64
}

// MaxFeedRows bounds a feed: it is held in memory.
const MaxFeedRows = 10_000_000

// ParseFeed reads a CSV feed named name (RFC 4180: quoted fields may hold
// commas and quotes; every row has the header's number of fields).
func ParseFeed(name string, src []byte) (*Feed, error) {
	if !utf8.Valid(src) {
		return nil, fmt.Errorf("%s: not UTF-8 text", name)
	}
	r := csv.NewReader(bytes.NewReader(src))
	r.ReuseRecord = false
	f := &Feed{Name: name}
	head, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty: want a header line naming the columns, then rows", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, csvErr(err))
	}
	for i, c := range head {
		c = strings.TrimSpace(c)
		switch {
		case c == "":
			return nil, fmt.Errorf("%s:1: column %d has no name", name, i+1)
		case strings.ContainsAny(c, " {}\""):
			return nil, fmt.Errorf("%s:1: column %q: a column's name holds no space, brace or quote", name, c)
		case slices.Contains(f.Columns, c):
			return nil, fmt.Errorf("%s:1: column %q named twice", name, c)
		}
		f.Columns = append(f.Columns, c)
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, csvErr(err))
		}
		if len(f.rows) == MaxFeedRows {
			return nil, fmt.Errorf("%s: more than %d rows", name, MaxFeedRows)
		}
		f.rows = append(f.rows, rec)
	}
	if len(f.rows) == 0 {
		return nil, fmt.Errorf("%s: %w", name, ErrNoFeedRows)
	}
	return f, nil
}

// csvErr words encoding/csv's errors without repeating the file's name.
func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("line %d: a row's field count differs from the header's", pe.StartLine)
		}
		return fmt.Errorf("line %d: %v", pe.StartLine, pe.Err)
	}
	return err
}

// Column is the index of the column named c, or -1.
func (f *Feed) Column(c string) int { return slices.Index(f.Columns, c) }

// Rows is the number of rows.
func (f *Feed) Rows() int { return len(f.rows) }

// CheckColumn checks that every value of column i can stand where
// ok says (a URL's request target, a header's value): the first value
// that cannot is the error, with its line.
func (f *Feed) CheckColumn(i int, where string, ok func(string) bool) error {
	for n, row := range f.rows {
		if !ok(row[i]) {
			return fmt.Errorf("%s: row %d: column %s holds %q, which %s cannot carry", f.Name, n+1, f.Columns[i], row[i], where)
		}
	}
	return nil
}

// next is the next row, in order, starting again after the last.
func (f *Feed) next() []string {
	i := f.cursor.Add(1) - 1
	return f.rows[i%uint64(len(f.rows))]
}
