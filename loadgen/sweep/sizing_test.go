package sweep

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// sizingProxies is nginxingress.SizingPlan's order for the worker counts:
// per count the plaintext nginx, then the TLS one; running, each has a
// URL and a master's pid.
func sizingProxies(running bool, workers ...int) []SizingProxy {
	var out []SizingProxy
	for i, n := range workers {
		for _, tls := range []bool{false, true} {
			px := SizingProxy{Name: "nginx-w" + strconv.Itoa(n), Workers: n, TLS: tls, URL: "planned"}
			if tls {
				px.Name += "-tls"
			}
			if running {
				px.URL, px.PID = "http://127.0.0.1:"+strconv.Itoa(8000+2*i), 100+2*i
				if tls {
					px.URL, px.PID = "https://127.0.0.1:"+strconv.Itoa(8001+2*i), 101+2*i
				}
			}
			out = append(out, px)
		}
	}
	return out
}

// TestSizing: size's plan, planned and running, from one builder: the TLS
// listeners' paths open a connection per request and use the run's files;
// a running path is watched by its nginx, the target by its pid.
func TestSizing(t *testing.T) {
	base := Spec{Ladder: Ladder{{Connections: 64, Threads: 2}}, Payloads: Payloads{1024}, Duration: Duration(5 * time.Second), Repeats: 1, Rates: Rates{0}}
	planned := Sizing(base, sizingProxies(false, 1), "ecdsa", SizingAt{})
	running := Sizing(base, sizingProxies(true, 1), "ecdsa", SizingAt{TargetPID: 42, CACert: "ca.pem", Cert: "c.pem", Key: "c.key"})
	for _, tc := range []struct {
		name   string
		got    *Spec
		target *Watch
		paths  []Path
	}{
		{"planned", planned, nil, []Path{
			{Name: "nginx-w1", URL: "planned", Workers: 1},
			{Name: "nginx-w1-tls", URL: "planned", Workers: 1, NewConn: true},
		}},
		{"running", running, &Watch{PID: 42}, []Path{
			{Name: "nginx-w1", URL: "http://127.0.0.1:8000", Workers: 1, Watch: &Watch{PID: 100, Name: "nginx"}},
			{Name: "nginx-w1-tls", URL: "https://127.0.0.1:8001", Workers: 1, NewConn: true, Watch: &Watch{PID: 101, Name: "nginx"}, CACert: "ca.pem", Cert: "c.pem", Key: "c.key"},
		}},
	} {
		s := tc.got
		if s.Protocol != "http1" || s.Endpoint != DefaultEndpoint || s.Builtin != "size" || s.KeyType != "ecdsa" || !reflect.DeepEqual(s.Ladder, base.Ladder) {
			t.Errorf("%s: protocol %q endpoint %q builtin %q key type %q ladder %v", tc.name, s.Protocol, s.Endpoint, s.Builtin, s.KeyType, s.Ladder)
		}
		if !reflect.DeepEqual(s.Target, tc.target) {
			t.Errorf("%s: target %+v, want %+v", tc.name, s.Target, tc.target)
		}
		if !reflect.DeepEqual(s.Paths, tc.paths) {
			t.Errorf("%s: paths\n%+v\nwant\n%+v", tc.name, s.Paths, tc.paths)
		}
	}
	if base.Paths != nil || base.Builtin != "" {
		t.Error("Sizing changed its base")
	}
	// What a resume checks before nginx starts is what the run saves.
	if d := settingsDiff(mustJSON(t, running), planned); d != "" {
		t.Errorf("the planned sizing differs from the running one in %s", d)
	}
}

// TestSizingFlags: a saved sizing gives back the flags that remake it,
// --key-type too (which a resume once dropped, so that an ECDSA sizing
// went on with RSA handshakes); an older plan without a key type gives
// none, and a baseline path added by hand no worker count.
func TestSizingFlags(t *testing.T) {
	base := Spec{Ladder: Ladder{{Connections: 1, Threads: 1}, {Connections: 4, Threads: 2}}, Payloads: Payloads{1024},
		Duration: Duration(3 * time.Second), Warmup: Duration(500 * time.Millisecond), Repeats: 2, Rates: Rates{0}}
	mutual := SizingAt{TargetPID: 1, CACert: "ca", Cert: "c", Key: "k"}
	common := []Flag{{"ladder", "c1t1,c4t2"}, {"payload", "1024"}, {"duration", "3s"}, {"warmup", "500ms"}, {"repeats", "2"}}
	older := Sizing(base, sizingProxies(true, 2), "", SizingAt{TargetPID: 1, CACert: "ca"})
	older.Paths = append([]Path{{Name: "baseline", URL: "http://127.0.0.1:1"}}, older.Paths...)
	two := base
	two.Payloads = Payloads{100, 1024}
	for _, tc := range []struct {
		name  string
		saved *Spec
		want  []Flag
	}{
		{"rsa", Sizing(base, sizingProxies(true, 1, 2), "rsa", SizingAt{TargetPID: 1, CACert: "ca"}),
			append([]Flag{{"workers", "1,2"}}, append(common, Flag{"key-type", "rsa"})...)},
		{"ecdsa, mutual", Sizing(base, sizingProxies(true, 4, 2), "ecdsa", mutual),
			append([]Flag{{"workers", "4,2"}}, append(common, Flag{"mtls", "true"}, Flag{"key-type", "ecdsa"})...)},
		{"older, with a baseline", older, append([]Flag{{"workers", "2"}}, common...)},
		{"two payloads", Sizing(two, sizingProxies(true, 1), "rsa", SizingAt{TargetPID: 1}),
			[]Flag{{"workers", "1"}, {"ladder", "c1t1,c4t2"}, {"duration", "3s"}, {"warmup", "500ms"}, {"repeats", "2"}, {"key-type", "rsa"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var saved Spec // as Saved reads it back
			if err := json.Unmarshal(mustJSON(t, tc.saved), &saved); err != nil {
				t.Fatal(err)
			}
			if got := SizingFlags(&saved); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SizingFlags =\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

// TestKeyTypeSettings: a resume with another key type than the one the
// sizing recorded is refused; a plan that recorded none (an older
// loadgen) is not.
func TestKeyTypeSettings(t *testing.T) {
	base := Spec{Ladder: Ladder{{Connections: 1, Threads: 1}}, Payloads: Payloads{1024}, Duration: Duration(time.Second), Repeats: 1, Rates: Rates{0}}
	at := func(kt string) *Spec { return Sizing(base, sizingProxies(false, 1), kt, SizingAt{}) }
	for _, tc := range []struct{ stored, now, want string }{
		{"ecdsa", "ecdsa", ""},
		{"ecdsa", "rsa", "key_type"},
		{"rsa", "ecdsa", "key_type"},
		{"", "rsa", ""},
		{"", "ecdsa", ""},
	} {
		if got := settingsDiff(mustJSON(t, at(tc.stored)), at(tc.now)); got != tc.want {
			t.Errorf("stored %q, resumed with %q: diff %q, want %q", tc.stored, tc.now, got, tc.want)
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
