package sweep

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseLadder(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"c1t1..c128t128", "c1t1 c2t2 c4t4 c8t8 c16t16 c32t32 c64t64 c128t128"},
		{"c2t1..c16t8", "c2t1 c4t2 c8t4 c16t8"},
		{"c4t4..c4t4", "c4t4"},
		{"c1t1,c4t4,c16t16", "c1t1 c4t4 c16t16"},
		{"c1t1 c4t4", "c1t1 c4t4"},
		{"C8T2", "c8t2"},
		{"c16", "c16t16"},
	} {
		got, err := ParseLadder(tc.in)
		if err != nil {
			t.Errorf("ParseLadder(%q): %v", tc.in, err)
			continue
		}
		var parts []string
		for _, r := range got {
			parts = append(parts, r.String())
		}
		if s := strings.Join(parts, " "); s != tc.want {
			t.Errorf("ParseLadder(%q) = %s, want %s", tc.in, s, tc.want)
		}
	}
	for _, bad := range []string{"", "c1t1..c3t128", "c1t1..c128t64", "c4t4..c1t1", "c1t2", "c0t0", "x1t1", "c1t1..", "c1t1,,c2t3", "c1t1..c3t3"} {
		if r, err := ParseLadder(bad); err == nil {
			t.Errorf("ParseLadder(%q) = %v, want an error", bad, r)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"100": 100, "100B": 100, "1KiB": 1024, "1k": 1024, "1 KB": 1024, "1MiB": 1 << 20, "1mb": 1 << 20, "0": 0, "1.5KiB": 1536} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.5", "abc", "1TiB", "2GiB", "NaN", "1e400"} {
		if n, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, n)
		}
	}
	for _, n := range []int{100, 1024, 1 << 20, 1536} {
		back, err := ParseSize(FormatSize(n))
		if err != nil || back != n {
			t.Errorf("FormatSize(%d) = %q does not parse back", n, FormatSize(n))
		}
	}
}

const goodSpec = `paths:
  - name: baseline
    url: http://127.0.0.1:8080
  - name: nginx
    url: http://127.0.0.1:8081
    watch: {process: nginx}
ladder: c1t1..c4t4
payloads: [100, 1KiB]
duration: 2s
repeats: 2
`

func TestParseSpec(t *testing.T) {
	s, err := Parse(strings.NewReader(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	if s.BaselineName() != "baseline" || s.Protocol != "http1" || s.Endpoint != DefaultEndpoint || len(s.Ladder) != 3 ||
		!reflect.DeepEqual(s.Payloads, Payloads{100, 1024}) || s.Paths[1].Watch.Selector() != "name:nginx" || !reflect.DeepEqual(s.Rates, Rates{0}) {
		t.Errorf("parsed %+v", s)
	}
	named, err := Parse(strings.NewReader(strings.Replace(goodSpec, "{process: nginx}", "{pid: 42, name: ingress}", 1)))
	if err != nil || named.Paths[1].Watch.Label() != "ingress" || named.Paths[1].Watch.Selector() != "pid:42" {
		t.Errorf("named watch: %v %+v", err, named.Paths[1].Watch)
	}
	tlsPath := strings.Replace(goodSpec, "    url: http://127.0.0.1:8081", "    url: https://127.0.0.1:8443\n    new_conn: true\n    cacert: ca.pem\n    workers: 2", 1)
	s, err = Parse(strings.NewReader(tlsPath))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Paths[1]; !p.NewConn || p.CACert != "ca.pem" || p.Workers != 2 || p.Insecure {
		t.Errorf("parsed path %+v", p)
	}
	// HTTP/3 is HTTP: the endpoint and its payloads apply.
	h3 := "protocol: h3\n" + strings.ReplaceAll(goodSpec, "http://127.0.0.1:808", "https://127.0.0.1:808")
	if s, err := Parse(strings.NewReader(h3)); err != nil || s.Endpoint != DefaultEndpoint {
		t.Errorf("protocol h3: %v, endpoint %q", err, s.Endpoint)
	}
	if s, err := Parse(strings.NewReader("endpoint: /get\n" + h3)); err != nil || s.Endpoint != "/get" {
		t.Errorf("protocol h3 with an endpoint: %v, endpoint %q", err, s.Endpoint)
	}
	// hops: the chain of targets each request crosses, for the report.
	if s, err = Parse(strings.NewReader(goodSpec + "hops: 3\n")); err != nil || s.Hops != 3 {
		t.Errorf("hops: 3 parsed as %d: %v", s.Hops, err)
	}
}

// Bad sweep files name the line and the field at fault.
func TestParseSpecErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(string) string
		msg  []string
	}{
		"unknown key": {func(s string) string { return s + "colour: blue\n" }, []string{"line 11", "colour", "not a sweep key"}},
		"unknown path key": {func(s string) string {
			return strings.Replace(s, "    url: http://127.0.0.1:8081", "    uri: http://127.0.0.1:8081", 1)
		}, []string{"line 5", "uri"}},
		"bad ladder":       {func(s string) string { return strings.Replace(s, "c1t1..c4t4", "c1t1..c3t128", 1) }, []string{"line 7", "ladder", "c3t128"}},
		"negative payload": {func(s string) string { return strings.Replace(s, "[100, 1KiB]", "[100, -5]", 1) }, []string{"line 8", "-5"}},
		"no url":           {func(s string) string { return strings.Replace(s, "    url: http://127.0.0.1:8081\n", "", 1) }, []string{"paths[1]", "nginx", "url is missing"}},
		"bad duration":     {func(s string) string { return strings.Replace(s, "2s", "soon", 1) }, []string{"line 9", "soon"}},
		"zero duration":    {func(s string) string { return strings.Replace(s, "2s", "0s", 1) }, []string{"duration", "got 0"}},
		"zero repeats":     {func(s string) string { return strings.Replace(s, "repeats: 2", "repeats: 0", 1) }, []string{"repeats", "at least 1"}},
		"too many hops":    {func(s string) string { return s + "hops: 65\n" }, []string{"hops", "65"}},
		"two watches":      {func(s string) string { return strings.Replace(s, "{process: nginx}", "{process: nginx, pid: 3}", 1) }, []string{"watch", "exactly one"}},
		"dup name":         {func(s string) string { return strings.Replace(s, "name: nginx", "name: baseline", 1) }, []string{"used twice"}},
		"not yaml":         {func(string) string { return "paths: [" }, []string{"line"}},
		"bad watch name": {func(s string) string {
			return strings.Replace(s, "{process: nginx}", "{process: nginx, name: \"a b\"}", 1)
		}, []string{"nginx", "a b"}},
		"endpoint on grpc":   {func(s string) string { return s + "protocol: grpc\nendpoint: /x\n" }, []string{"endpoint", "grpc"}},
		"call on http":       {func(s string) string { return s + "call: a.B/C\n" }, []string{"call", "grpc"}},
		"data without call":  {func(s string) string { return s + "data: \"{}\"\n" }, []string{"call"}},
		"messages on http":   {func(s string) string { return s + "messages: 5\n" }, []string{"messages", "grpc-server-stream", "not http1"}},
		"window on grpc":     {func(s string) string { return s + "protocol: grpc\nwindow: 4\n" }, []string{"window", "grpc-stream", "not grpc"}},
		"feed on grpc":       {func(s string) string { return s + "protocol: grpc\nfeed: rows.csv\n" }, []string{"feed", "http1, h2 and h2c", "not grpc"}},
		"proto without call": {func(s string) string { return s + "proto: [a.proto]\n" }, []string{"proto", "call:"}},
		"import_paths alone": {func(s string) string {
			return s + "protocol: grpc\ncall: a.B/C\nimport_paths: [inc]\n"
		}, []string{"import_paths", "proto key"}},
		"proto and protoset": {func(s string) string {
			return s + "protocol: grpc\ncall: a.B/C\nprotoset: x.pb\nproto: [a.proto]\n"
		}, []string{"protoset and proto"}},
		"negative messages": {func(s string) string { return s + "protocol: grpc-client-stream\nmessages: -1\n" }, []string{"negative"}},
		"negative workers": {func(s string) string {
			return strings.Replace(s, "{process: nginx}", "{process: nginx}\n    workers: -1", 1)
		}, []string{"nginx", "workers -1"}},
		"cacert on http": {func(s string) string {
			return strings.Replace(s, "{process: nginx}", "{process: nginx}\n    insecure: true", 1)
		}, []string{"nginx", "https://"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.edit(goodSpec)))
			if err == nil {
				t.Fatal("no error")
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q lacks %q", err, m)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// Paths vary fastest, then rungs, payloads, repeats; IDs are unique.
func TestPlanOrder(t *testing.T) {
	s, err := Parse(strings.NewReader(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	plan := s.Plan()
	if len(plan) != 2*3*2*2 {
		t.Fatalf("%d steps, want 24", len(plan))
	}
	var got []string
	for _, st := range plan[:8] {
		got = append(got, st.ID())
	}
	want := []string{
		"baseline_c1t1_100B_closed_r1", "nginx_c1t1_100B_closed_r1",
		"baseline_c2t2_100B_closed_r1", "nginx_c2t2_100B_closed_r1",
		"baseline_c4t4_100B_closed_r1", "nginx_c4t4_100B_closed_r1",
		"baseline_c1t1_1KiB_closed_r1", "nginx_c1t1_1KiB_closed_r1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan starts %v\nwant %v", got, want)
	}
	if plan[12].Repeat != 2 || plan[12].Path != "baseline" || plan[12].Rung.Connections != 1 {
		t.Errorf("step 12 = %+v, want the second repeat's first step", plan[12])
	}
	seen := map[string]bool{}
	for i, st := range plan {
		if seen[st.ID()] || st.Index != i {
			t.Errorf("step %d: id %s repeated or index %d", i, st.ID(), st.Index)
		}
		seen[st.ID()] = true
	}
}

func FuzzParseLadder(f *testing.F) {
	for _, s := range []string{"c1t1..c128t128", "c1t1,c4t4", "c2t1..c16t8", "c1t1..c3t128", "c999999t1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseLadder(s)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Connections < 1 || r.Threads < 1 || r.Threads > r.Connections {
				t.Fatalf("%q gave invalid rung %v", s, r)
			}
			back, err := ParseRung(r.String())
			if err != nil || back != r {
				t.Fatalf("%v does not round-trip", r)
			}
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"100", "1KiB", "1MiB", "-1", "1.5k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && (n < 0 || n > 1<<30) {
			t.Fatalf("%q = %d", s, n)
		}
	})
}

func FuzzParseSpec(f *testing.F) {
	f.Add(goodSpec)
	f.Add("paths: []\n")
	f.Add("ladder: [c1t1, 3]\n")
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		if len(spec.Plan()) == 0 {
			t.Fatalf("valid spec %q has an empty plan", s)
		}
	})
}

// A sweep's messages and window reach each step's run, as run's
// --messages and --window, and its result records them.
func TestStepMessagesAndWindow(t *testing.T) {
	for _, tc := range []struct {
		spec             string
		messages, window int
	}{
		{"protocol: grpc-client-stream\nmessages: 7\n", 7, 0},
		{"protocol: grpc-server-stream\nmessages: 3\n", 3, 0},
		{"protocol: grpc-stream\nwindow: 4\n", 0, 4},
	} {
		s, err := Parse(strings.NewReader("paths: [{name: echo, url: \"127.0.0.1:9\"}]\nladder: c1t1\npayloads: [100]\nduration: 1s\n" + tc.spec))
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		st := s.Plan()[0]
		cfg, d, err := BuildStep(&s, s.Paths[0], st)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		if c, ok := d.(io.Closer); ok {
			c.Close()
		}
		if cfg.Config.Messages != tc.messages || cfg.Config.Window != tc.window {
			t.Errorf("%q: the step's run has messages %d, window %d; want %d, %d", tc.spec, cfg.Config.Messages, cfg.Config.Window, tc.messages, tc.window)
		}
		if want := max(1, tc.window); tc.window > 0 && cfg.Streams != want {
			t.Errorf("%q: the step's run has %d streams; want the window's %d, as run --window gives", tc.spec, cfg.Streams, want)
		}
		if cfg.Size != 100 || cfg.Target != "127.0.0.1:9" || cfg.Connections != 1 {
			t.Errorf("%q: recorded size %d, target %q, connections %d; want the payload, the path and the rung's", tc.spec, cfg.Size, cfg.Target, cfg.Connections)
		}
	}
}

// TestParseMessageSize: a message's or a write's size is 1 byte or more,
// worded alike for every flag (lab's --size and --stream-size, k8s paths'
// --stream-size).
func TestParseMessageSize(t *testing.T) {
	for _, tc := range []struct {
		flag, in string
		want     int
		err      string
	}{
		{"--size", "1", 1, ""},
		{"--size", "1KiB", 1024, ""},
		{"--stream-size", "128KiB", 128 << 10, ""},
		{"--size", "0", 0, `--size "0": want a size of 1 B or more`},
		{"--stream-size", "0B", 0, `--stream-size "0B": want a size of 1 B or more`},
		{"--size", "-1", 0, `--size "-1": want a size of 1 B or more (`},
		{"--stream-size", "x", 0, `--stream-size "x": want a size of 1 B or more (`},
	} {
		got, err := ParseMessageSize(tc.flag, tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s %s = %d, %v; want %d", tc.flag, tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("%s %s = %d, %v; want the error %q", tc.flag, tc.in, got, err, tc.err)
		}
	}
}
