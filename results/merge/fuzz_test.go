package merge

import (
	"encoding/json"
	"testing"

	"loadgen/results"
)

// FuzzDecode feeds Decode arbitrary files: it returns a run or an error,
// never panics, and what it accepts merges with another generator's copy
// of it, but not with itself.
func FuzzDecode(f *testing.F) {
	in, _, _ := workerRuns(f, 1, 1)
	b, _ := json.Marshal(in[0].Run)
	f.Add(b)
	f.Add([]byte(`{"schema":2,"tool":"loadgen","histograms":{"latency":"HISTFAAAABx4nJNpmSzMwMDAxAABzFCaEUrzQWkAKvwCGg=="}}`))
	f.Add([]byte(`{"schema":2,"tool":"loadgen","histograms":{"latency":"HISTFAAAAA=="}}`))
	f.Add([]byte(`{}`))
	step, _ := json.Marshal(results.Step{Schema: results.SchemaVersion, Tool: "loadgen", Rung: "c4t4", Run: in[0].Run})
	f.Add(step)
	f.Add([]byte(`{"schema":2,"tool":"loadgen","rung":"c1t1","failed":"boom"}`))
	f.Add([]byte(`{"schema":2,"tool":"loadgen","rung":"c1t1","run":{"schema":9,"tool":"loadgen"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := Decode("fuzz.json", data)
		if err != nil {
			return
		}
		other := *x.Run
		other.Env.Hostname += "-other"
		if _, _, err := Runs([]Input{x, {Source: "other.json", Run: &other}}); err != nil {
			t.Fatalf("decoded but does not merge with another host's copy: %v", err)
		}
		if _, _, err := Runs([]Input{x, x}); err == nil {
			t.Fatal("the same run merged with itself")
		}
	})
}
