package sweep

import (
	"slices"
	"testing"
)

func TestWatchName(t *testing.T) {
	for comm, want := range map[string]string{
		"nginx":           "nginx",
		"php-fpm: pool":   "php-fpm-pool",
		"(sd-pam)":        "sd-pam-",
		"kworker/0:1":     "kworker-0-1",
		"..hidden":        "hidden",
		"  ":              "",
		"envoy_main.v2-x": "envoy_main.v2-x",
	} {
		if got := WatchName(comm); got != want {
			t.Errorf("WatchName(%q) = %q, want %q", comm, got, want)
		}
	}
}

func TestWatchWarning(t *testing.T) {
	p := Path{Name: "px", URL: "http://127.0.0.1:8080", Watch: &Watch{Process: "nginx"}}
	for _, c := range []struct {
		name      string
		path      Path
		pids      []int
		trees     [][]int
		listening map[int]bool
		want      string
	}{
		{"one tree", p, []int{10, 11}, [][]int{{10, 11}}, map[int]bool{10: true}, ""},
		{"one tree, listeners unknown", p, []int{10}, [][]int{{10}}, nil, ""},
		{"ours and another", p, []int{10, 11, 20}, [][]int{{10, 11}, {20}}, map[int]bool{11: true},
			"watch px (name:nginx) also matches pid 20, which does not serve 127.0.0.1:8080: its figures would add it; watch pid:10 instead (the one listening there, with its children)"},
		{"ours and two others", p, []int{10, 20, 21, 30}, [][]int{{10}, {20, 21}, {30}}, map[int]bool{10: true},
			"watch px (name:nginx) also matches pids 20, 21, 30, which do not serve 127.0.0.1:8080: its figures would add them; watch pid:10 instead (the one listening there, with its children)"},
		{"two of ours and another", p, []int{10, 20, 30}, [][]int{{10}, {20}, {30}}, map[int]bool{10: true, 20: true},
			"watch px (name:nginx) also matches pid 30, which does not serve 127.0.0.1:8080: its figures would add it; watch pid:10 or pid:20 instead (the ones listening there, with their children)"},
		{"port of an https URL", Path{Name: "tls", URL: "https://example.test", Watch: &Watch{Process: "nginx"}}, []int{10, 20}, [][]int{{10}, {20}}, map[int]bool{10: true},
			"watch tls (name:nginx) also matches pid 20, which does not serve example.test:443: its figures would add it; watch pid:10 instead (the one listening there, with its children)"},
		{"none listening, several trees", p, []int{10, 11, 12, 20}, [][]int{{10, 11, 12}, {20}}, nil,
			"watch px (name:nginx) matches 4 processes in 2 process trees (10 with 11, 12; 20): its figures add them all; if not all are this path's proxy, watch its own by pid: pid:10 or pid:20"},
	} {
		if got := c.path.watchWarning(c.pids, c.trees, c.listening); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestHostPort(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/x": "127.0.0.1:8080",
		"http://example.test":     "example.test:80",
		"https://example.test":    "example.test:443",
		"https://[::1]:8443":      "[::1]:8443",
		"127.0.0.1:9000":          "127.0.0.1:9000",
	} {
		if got := hostPort(in); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", in, got, want)
		}
	}
}

// Only the name: watches of paths that are not a sidecar's are looked at.
func TestWatchWarnings(t *testing.T) {
	spec := Spec{Paths: []Path{
		{Name: "none"},
		{Name: "pid", Watch: &Watch{PID: 1, Name: "init"}},
		{Name: "named", Watch: &Watch{Process: "nginx"}},
		{Name: "sidecar", Watch: &Watch{Process: "envoy"}, Sidecar: &Sidecar{Proxy: "envoy"}},
		{Name: "quiet", Watch: &Watch{Process: "haproxy"}},
	}}
	var asked []string
	got := spec.watchWarnings(func(p Path) string {
		asked = append(asked, p.Name)
		if p.Name == "quiet" {
			return ""
		}
		return "warn " + p.Name
	})
	if want := []string{"named", "quiet"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	if want := []string{"warn named"}; !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}
