package sweep

import (
	"reflect"
	"strings"
	"testing"

	"loadgen/results/cost"
)

func TestParseWatch(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Watch
		sel  string
	}{
		{"name:nginx", Watch{Process: "nginx"}, "name:nginx"},
		{"nginx", Watch{Process: "nginx"}, "name:nginx"},
		{"kworker/0:1", Watch{Process: "kworker/0:1"}, "name:kworker/0:1"},
		{"pid:12", Watch{PID: 12}, "pid:12"},
		{"tree:12", Watch{PID: 12}, "pid:12"},
		{"pid:12,13", Watch{PIDs: []int{12, 13}}, "pid:12,13"},
		{"cgroup:/sys/fs/cgroup/x.slice", Watch{Cgroup: "/sys/fs/cgroup/x.slice"}, "cgroup:/sys/fs/cgroup/x.slice"},
	} {
		got, err := ParseWatch(tc.in)
		if err != nil {
			t.Errorf("ParseWatch(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("ParseWatch(%q) = %+v, want %+v", tc.in, *got, tc.want)
		}
		if s := got.Selector(); s != tc.sel {
			t.Errorf("ParseWatch(%q).Selector() = %q, want %q", tc.in, s, tc.sel)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"pid:x", `"x" is not a process id`},
		{"pid:0", "not a process id"},
		{"only:12", "with their descendants: pid:N"},
		{"cgroup:relative", "absolute"},
		{"foo:bar", `unknown kind "foo"`},
	} {
		if w, err := ParseWatch(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseWatch(%q) = %+v, %v; want an error with %q", tc.in, w, err, tc.want)
		}
	}
}

// A watch's pid: and results/cost's pid: are one selection: the process
// and its descendants, whether the watch came from --watch or a file.
func TestWatchPIDMeansCostPID(t *testing.T) {
	for _, in := range []string{"pid:7", "pid:7,8", "name:nginx", "cgroup:/sys/fs/cgroup/a"} {
		w, err := ParseWatch(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cost.ParseSelector(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cost.ParseSelector(w.Selector())
		if err != nil {
			t.Fatalf("%q: the watch's selector %q does not parse: %v", in, w.Selector(), err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: the watch samples %+v, results/cost reads %+v", in, got, want)
		}
	}
	for _, w := range []Watch{{PID: 7}, {PIDs: []int{7, 8}}} {
		s, err := cost.ParseSelector(w.Selector())
		if err != nil || !s.Children {
			t.Errorf("file watch %+v samples %+v (%v); want the processes with their descendants", w, s, err)
		}
	}
}

func TestParseSidecarURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *Sidecar
		ok   bool
	}{
		{"http://127.0.0.1:80", nil, false},
		{"sidecar:nginx", &Sidecar{Proxy: "nginx", Placement: "both"}, true},
		{"sidecar:none", &Sidecar{Placement: "none"}, true},
		{"sidecar:envoy,mode=serveronly", &Sidecar{Proxy: "envoy", Placement: "serveronly"}, true},
		{"sidecar:haproxy,placement=clientonly,workers=4", &Sidecar{Proxy: "haproxy", Placement: "clientonly", Workers: 4}, true},
		{"sidecar:caddy,mtls", &Sidecar{Proxy: "caddy", Placement: "both", MTLS: true}, true},
	} {
		got, ok, err := ParseSidecarURL(tc.in)
		if err != nil || ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSidecarURL(%q) = %+v, %v, %v; want %+v, %v", tc.in, got, ok, err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"sidecar:nginx,workers=x", `workers="x" is not a number`},
		{"sidecar:nginx,color=red", `unknown "color=red"`},
	} {
		if _, ok, err := ParseSidecarURL(tc.in); !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSidecarURL(%q) = %v, %v; want a sidecar error with %q", tc.in, ok, err, tc.want)
		}
	}
}
