package merge

import (
	"encoding/json"
	"testing"
)

// FuzzDecode feeds Decode arbitrary files: it returns a run or an error,
// never panics, and what it accepts merges.
func FuzzDecode(f *testing.F) {
	in, _, _ := workerRuns(f, 1, 1)
	b, _ := json.Marshal(in[0].Run)
	f.Add(b)
	f.Add([]byte(`{"schema":2,"tool":"loadgen","histograms":{"latency":"HISTFAAAABx4nJNpmSzMwMDAxAABzFCaEUrzQWkAKvwCGg=="}}`))
	f.Add([]byte(`{"schema":2,"tool":"loadgen","histograms":{"latency":"HISTFAAAAA=="}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := Decode("fuzz.json", data)
		if err != nil {
			return
		}
		if _, _, err := Runs([]Input{x, x}); err != nil {
			t.Fatalf("decoded but does not merge with itself: %v", err)
		}
	})
}
