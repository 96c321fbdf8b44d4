package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
)

// testdata/messages is a real `loadgen sweep` of -p grpc-server-stream
// (5 messages a call) against loadgen's gRPC target: its CSV has the
// message columns, a sweep without streamed answers has empty cells in
// them, and a CSV of no such sweep has none.
func TestCSVMessages(t *testing.T) {
	streamed, plain := readSweep(t, "testdata/messages"), fixtureSweep(t)[0]
	got := render(t, func(b *bytes.Buffer) error { return CSV(b, []*Sweep{streamed, plain}) })
	golden(t, "messages.csv", got)
	rows, err := csv.NewReader(bytes.NewReader(got)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	at := slices.Index(rows[0], csvMessages[0])
	if at < 0 {
		t.Fatalf("no message columns in %v", rows[0])
	}
	for i, st := range streamed.Steps {
		m := st.Run.Summary.Messages
		if rows[1+i][at] != i64(m.Count) || rows[1+i][at+2] != micros(m.First.P50) || rows[1+i][at+9] != micros(m.Gap.Max) {
			t.Errorf("step %s: cells %v, want its messages %d, first p50 %v, gap max %v", st.ID, rows[1+i][at:at+10], m.Count, m.First.P50, m.Gap.Max)
		}
	}
	for _, r := range rows[1+len(streamed.Steps):] {
		if !slices.Equal(r[at:at+len(csvMessages)], make([]string, len(csvMessages))) {
			t.Errorf("a step without messages has message cells %v", r[at:at+len(csvMessages)])
		}
	}
	plainRows, err := csv.NewReader(bytes.NewReader(render(t, func(b *bytes.Buffer) error { return CSV(b, []*Sweep{plain}) }))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(plainRows[0], csvMessages[0]) {
		t.Errorf("no streamed answers, yet message columns: %v", plainRows[0])
	}
}
