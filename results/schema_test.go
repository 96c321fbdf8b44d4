package results_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"loadgen/results"
)

// The JSON Schemas of the result format, in docs/schema.
var schemaFiles = map[string]string{"run": "run.schema.json", "step": "step.schema.json", "manifest": "manifest.schema.json"}

func compileSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	out := map[string]*jsonschema.Schema{}
	for name, file := range schemaFiles {
		path, err := filepath.Abs(filepath.Join("..", "docs", "schema", file))
		if err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(path)
		if err != nil {
			t.Fatalf("docs/schema/%s: %v", file, err)
		}
		out[name] = sch
	}
	return out
}

func validate(t *testing.T, sch *jsonschema.Schema, b []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

// fill sets every field of v, at any depth, to a value that is not its
// zero: pointers allocated, a slice and a map of one element, so that an
// omitempty field is written too.
func fill(v reflect.Value) {
	switch v.Interface().(type) {
	case time.Time:
		v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.UTC)))
		return
	case json.RawMessage:
		v.Set(reflect.ValueOf(json.RawMessage(`{"paths":[{"name":"a"}],"duration":"10s"}`)))
		return
	case results.Duration:
		v.SetInt(int64(3*time.Second + 92159*time.Nanosecond)) // 3000092.159 µs
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(200)
	case reflect.Float64:
		v.SetFloat(12.5)
	default:
		panic("fill: " + v.Type().String())
	}
}

// full and empty are a Run, a Step and a Manifest with every field set,
// and with none but the header.
func full() map[string]any {
	var run results.Run
	fill(reflect.ValueOf(&run).Elem())
	run.Schema, run.Tool = results.SchemaVersion, "loadgen"
	var st results.Step
	fill(reflect.ValueOf(&st).Elem())
	st.Schema, st.Tool, st.Run = results.SchemaVersion, "loadgen", &run
	var m results.Manifest
	fill(reflect.ValueOf(&m).Elem())
	m.Schema, m.Tool, m.Kind = results.SchemaVersion, "loadgen", "sweep"
	return map[string]any{"run": &run, "step": &st, "manifest": &m}
}

func empty() map[string]any {
	return map[string]any{
		"run":      &results.Run{Schema: results.SchemaVersion, Tool: "loadgen"},
		"step":     &results.Step{Schema: results.SchemaVersion, Tool: "loadgen"},
		"manifest": &results.Manifest{Schema: results.SchemaVersion, Tool: "loadgen", Kind: "sweep"},
	}
}

// What the code writes is what docs/schema documents: every field of
// every result type, set or left out, validates, and so would no field the
// schemas do not name (a writer that adds one fails here until the schema
// documents it).
func TestWritesMatchSchema(t *testing.T) {
	schemas := compileSchemas(t)
	for _, set := range []struct {
		name string
		docs map[string]any
	}{{"every field set", full()}, {"no field set", empty()}} {
		for name, doc := range set.docs {
			b, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, schemas[name], b); err != nil {
				t.Errorf("%s, %s: what loadgen writes does not match docs/schema/%s:\n%v\n%s", name, set.name, schemaFiles[name], err, b)
			}
		}
	}
}

// Every object of the format refuses a key it does not document
// (additionalProperties: false), but for the few whose keys are data: the
// status codes and the sweep's spec as asked.
func TestSchemaRefusesUndocumentedFields(t *testing.T) {
	schemas := compileSchemas(t)
	free := map[string]bool{"/summary/status": true, "/run/summary/status": true, "/spec": true,
		"/requests_by_name/0/status": true, "/run/requests_by_name/0/status": true}
	for name, doc := range full() {
		b, _ := json.Marshal(doc)
		var tree any
		json.Unmarshal(b, &tree)
		var objects []string
		var walk func(string, any)
		walk = func(at string, v any) {
			switch v := v.(type) {
			case map[string]any:
				if !free[at] && !strings.HasPrefix(at, "/spec/") {
					objects = append(objects, at)
				}
				for k, x := range v {
					walk(at+"/"+k, x)
				}
			case []any:
				for _, x := range v {
					walk(at+"/0", x)
				}
			}
		}
		walk("", tree)
		if len(objects) < 2 {
			t.Fatalf("%s: only %d objects", name, len(objects))
		}
		for _, at := range objects {
			var tree any
			json.Unmarshal(b, &tree)
			obj := tree
			for _, k := range strings.Split(at, "/")[1:] {
				switch o := obj.(type) {
				case map[string]any:
					obj = o[k]
				case []any:
					obj = o[0]
				}
			}
			obj.(map[string]any)["undocumented"] = 1
			mod, _ := json.Marshal(tree)
			if err := validate(t, schemas[name], mod); err == nil {
				t.Errorf("%s: docs/schema/%s takes an undocumented field in %s", name, schemaFiles[name], at+"/")
			}
		}
	}
}

// Every field of the result types survives a write and a read.
func TestEveryFieldRoundTrips(t *testing.T) {
	for name, doc := range full() {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(reflect.TypeOf(doc).Elem())
		if err := json.Unmarshal(b, back.Interface()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(back.Interface(), doc) {
			t.Errorf("%s differs after a round trip:\n got %+v\nwant %+v\n%s", name, back.Interface(), doc, b)
		}
	}
}

// Times are numbers with their unit in the key, exact to the nanosecond.
func TestTimesAreNumbers(t *testing.T) {
	run := results.Run{Schema: results.SchemaVersion, Tool: "loadgen",
		Config: results.Config{Duration: results.Duration(10 * time.Second), Warmup: results.Duration(500 * time.Millisecond),
			Timeout: results.Duration(2 * time.Second)},
		Summary: results.Summary{Duration: results.Duration(3000424856), LastOK: results.Duration(2900 * time.Millisecond),
			Latency: results.Latency{P50: results.Duration(92159), P99: results.Duration(4999999), Max: results.Duration(time.Minute + 1)},
			Pacing:  &results.Pacing{MaxLag: results.Duration(1500)}},
		Generator: results.Cost{CPUSeconds: 1.25}}
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"duration_s":10,`, `"warmup_s":0.5,`, `"timeout_us":2000000}`, `"duration_s":3.000424856`,
		`"last_ok_s":2.9`, `"p50_us":92.159,`, `"p99_us":4999.999,`, `"max_us":60000000.001,`, `"max_lag_us":1.5}`, `"cpu_s":1.25,`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in\n%s", want, b)
		}
	}
	var tree struct {
		Summary struct {
			Latency map[string]any `json:"latency"`
		} `json:"summary"`
	}
	json.Unmarshal(b, &tree)
	if p99, ok := tree.Summary.Latency["p99_us"].(float64); !ok || !(p99 < 5000) {
		t.Errorf(".summary.latency.p99_us < 5000 does not hold: %v", tree.Summary.Latency["p99_us"])
	}
}

// Numbers read exactly, a decimal to the nanosecond; exponents and more
// decimals round to it; anything but a number is refused.
func TestReadTimes(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`92.159`: 92159, `0`: 0, `1e3`: time.Millisecond, `0.0015`: 2, `0.0014`: 1, `-1.5`: -1500, `9223372036854775.807`: 1<<63 - 1,
		`null`: 7, // unchanged
	} {
		l := results.Latency{P50: 7}
		if err := json.Unmarshal([]byte(`{"p50_us":`+in+`}`), &l); err != nil || l.P50.D() != want {
			t.Errorf("p50_us %s: %v, %v; want %v", in, l.P50.D(), err, want)
		}
	}
	for _, in := range []string{`"92.159µs"`, `9223372036854775.808`, `1e300`, `true`, `{}`} {
		var l results.Latency
		if err := json.Unmarshal([]byte(`{"p50_us":`+in+`}`), &l); err == nil {
			t.Errorf("p50_us %s: no error, %v", in, l.P50)
		}
	}
	var c results.Config
	if err := json.Unmarshal([]byte(`{"duration_s":3.000424856,"timeout_us":2000000}`), &c); err != nil ||
		c.Duration.D() != 3000424856 || c.Timeout.D() != 2*time.Second {
		t.Errorf("config: %+v %v", c, err)
	}
}
