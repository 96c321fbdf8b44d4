package sweep

import (
	"reflect"
	"testing"
)

func TestSidecarHasProxy(t *testing.T) {
	for _, tc := range []struct {
		placement string
		want      bool
	}{{"none", false}, {"serveronly", true}, {"clientonly", true}, {"both", true}} {
		if got := (Sidecar{Proxy: "nginx", Placement: tc.placement}).HasProxy(); got != tc.want {
			t.Errorf("placement %s: HasProxy() = %v, want %v", tc.placement, got, tc.want)
		}
	}
}

// A sidecar path's cost watches its own proxies only, named as the user's
// watch or after the proxy, with the workers they run.
func TestSidecarsRunning(t *testing.T) {
	userWatch := &Watch{Process: "nginx"}
	for _, tc := range []struct {
		name        string
		watch       *Watch
		started     bool
		pids        []int
		wantWatch   *Watch
		wantWorkers int
	}{
		{"its proxies, named after the proxy", nil, true, []int{10, 11}, &Watch{PIDs: []int{10, 11}, Name: "haproxy"}, 4},
		{"its proxies, named as the user's watch", userWatch, true, []int{10}, &Watch{PIDs: []int{10}, Name: "nginx"}, 4},
		{"its proxies, named as the user's named watch", &Watch{Process: "x", Name: "proxies"}, true, []int{10}, &Watch{PIDs: []int{10}, Name: "proxies"}, 4},
		{"not started: nothing watched", userWatch, false, nil, nil, 0},
		{"pids unknown (placement none): the user's watch stays", userWatch, true, nil, userWatch, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Path{Name: "p", Watch: tc.watch, Sidecar: &Sidecar{Proxy: "haproxy", Placement: "both"}}
			p.SidecarsRunning("http://198.18.220.2:8080", "lg-p0-client", tc.started, tc.pids, 4)
			if p.URL != "http://198.18.220.2:8080" || p.NetNS != "lg-p0-client" {
				t.Errorf("URL %q, NetNS %q", p.URL, p.NetNS)
			}
			if !reflect.DeepEqual(p.Watch, tc.wantWatch) {
				t.Errorf("Watch = %+v, want %+v", p.Watch, tc.wantWatch)
			}
			if p.Workers != tc.wantWorkers {
				t.Errorf("Workers = %d, want %d", p.Workers, tc.wantWorkers)
			}
		})
	}
}

// TestSidecarProxies: the proxies the sidecar paths run, in order of
// their first path, each with its paths and their steps; a path of
// placement none runs no proxy, and a plain path none at all.
func TestSidecarProxies(t *testing.T) {
	s := &Spec{
		Paths: []Path{
			{Name: "baseline", URL: "http://a"},
			{Name: "bare", Sidecar: &Sidecar{Placement: "none"}},
			{Name: "envoy-both", Sidecar: &Sidecar{Proxy: "envoy", Placement: "both"}},
			{Name: "nginx-server", Sidecar: &Sidecar{Proxy: "nginx", Placement: "serveronly"}},
			{Name: "envoy-client", Sidecar: &Sidecar{Proxy: "envoy", Placement: "clientonly"}},
		},
		Ladder: Ladder{{1, 1}, {4, 4}}, Payloads: Payloads{100}, Rates: Rates{0, 100}, Repeats: 1,
	}
	per := len(s.Plan()) / len(s.Paths)
	if per != 4 {
		t.Fatalf("%d steps a path, want 4", per)
	}
	want := []SidecarProxy{{"envoy", []string{"envoy-both", "envoy-client"}, 2 * per}, {"nginx", []string{"nginx-server"}, per}}
	if got := s.SidecarProxies(); !reflect.DeepEqual(got, want) {
		t.Errorf("SidecarProxies() = %+v, want %+v", got, want)
	}
	if !s.HasSidecars() {
		t.Error("HasSidecars() = false with sidecar paths")
	}
	s.Paths = s.Paths[:2]
	if got := s.SidecarProxies(); len(got) != 0 || !s.HasSidecars() {
		t.Errorf("baseline and sidecar:none: SidecarProxies() = %+v, HasSidecars() = %v; want none, true", got, s.HasSidecars())
	}
	s.Paths = s.Paths[:1]
	if s.HasSidecars() {
		t.Error("HasSidecars() = true with no sidecar path")
	}
}

// A plan lists where each path's load goes: its URL, or a sidecar path's
// pods until the sweep makes them and fills its URL.
func TestPathWhere(t *testing.T) {
	for _, tc := range []struct {
		name string
		path Path
		want string
	}{
		{"a URL", Path{URL: "http://127.0.0.1:8080/get"}, "http://127.0.0.1:8080/get"},
		{"nothing", Path{}, ""},
		{"sidecars", Path{Sidecar: &Sidecar{Proxy: "envoy", Placement: "both"}}, "pods with sidecars: envoy both"},
		{"sidecars, mtls", Path{Sidecar: &Sidecar{Proxy: "nginx", Placement: "serveronly", MTLS: true}}, "pods with sidecars: nginx serveronly mtls"},
		{"no proxy named", Path{Sidecar: &Sidecar{Placement: "none"}}, "pods with sidecars: none"},
		{"nothing named", Path{Sidecar: &Sidecar{}}, "pods with sidecars:"},
		{"sidecars running", Path{URL: "http://10.0.0.2:8080/", Sidecar: &Sidecar{Proxy: "envoy", Placement: "both", MTLS: true}}, "http://10.0.0.2:8080/"},
	} {
		if got := tc.path.Where(); got != tc.want {
			t.Errorf("%s: Where() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
