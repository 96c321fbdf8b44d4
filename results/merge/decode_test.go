package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"loadgen/results"
)

// Runs written before schema 3 (durations as Go strings, results/store's
// testdata/schema2), bare or in a step of their schema, decode with their
// figures and merge; schema 2 reads as 3, the same meaning.
func TestDecodeSchema2(t *testing.T) {
	var in []Input
	for _, name := range []string{"w0.json", "w1.json"} {
		path := filepath.Join("..", "store", "testdata", "schema2", name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"schema": 2`) || !strings.Contains(string(b), `"p99": "`) {
			t.Fatalf("%s is no longer a schema-2 file", path)
		}
		x, err := Decode(path, b)
		if err != nil {
			t.Fatal(err)
		}
		if x.Run.Schema != results.SchemaVersion || x.Run.Config.Duration.String() != "1s" || x.Run.Summary.Latency.P99 <= 0 {
			t.Errorf("%s: schema %d, duration %v, p99 %v", name, x.Run.Schema, x.Run.Config.Duration, x.Run.Summary.Latency.P99)
		}
		step := fmt.Sprintf(`{"schema":2,"tool":"loadgen","index":0,"id":"a","rung":"c2t1","run":%s}`, b)
		y, err := Decode(path+" in a step", []byte(step))
		if err != nil || y.Run.Summary.Latency != x.Run.Summary.Latency || !reflect.DeepEqual(y.Run.Config, x.Run.Config) {
			t.Errorf("%s in a step: %v\n%+v\nwant %+v", name, err, y.Run, x.Run)
		}
		in = append(in, x)
	}
	if in[0].Run.Summary.Latency.P99.String() != "207.618047ms" {
		t.Errorf("w0's p99 %v, want the file's 207.618047ms", in[0].Run.Summary.Latency.P99)
	}
	got, _, err := Runs(in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.Requests != 1000 || got.Schema != results.SchemaVersion {
		t.Errorf("merged %d requests, schema %d", got.Summary.Requests, got.Schema)
	}
}
