package sweep

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePayloads(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Payloads
		wantErr string
	}{
		{"100", Payloads{100}, ""},
		{"100,1KiB,1MiB", Payloads{100, 1024, 1 << 20}, ""},
		{" 100 , 1k", Payloads{100, 1024}, ""},
		{"0", Payloads{0}, ""},
		{"100,lots", nil, `payload "lots" is not a size`},
		{"100,", nil, `payload "" is not a size`},
		{"2GiB", nil, `payload "2GiB": at most 1GiB`},
	} {
		got, err := ParsePayloads(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParsePayloads(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePayloads(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRates(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Rates
		wantErr string
	}{
		{"0", Rates{0}, ""},
		{"0,1k,2.5k", Rates{0, 1000, 2500}, ""},
		{"100, 200", Rates{100, 200}, ""},
		{"-1", nil, `rate "-1": want requests/s ≥ 0`},
		{"100,fast", nil, `rate "fast"`},
		{"2G", nil, `rate "2G"`},
	} {
		got, err := ParseRates(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseRates(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseRates(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParsePathFlag(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Path
		wantErr string
	}{
		{"nginx=http://127.0.0.1:8081", Path{Name: "nginx", URL: "http://127.0.0.1:8081"}, ""},
		{"a=http://h/?x=1", Path{Name: "a", URL: "http://h/?x=1"}, ""}, // the first = splits
		{"mesh=sidecar:envoy,mode=client", Path{Name: "mesh", Sidecar: &Sidecar{Proxy: "envoy", Placement: "client"}}, ""},
		{"baseline=sidecar:none", Path{Name: "baseline", Sidecar: &Sidecar{Placement: "none"}}, ""},
		{"http://127.0.0.1:8081", Path{}, `"http://127.0.0.1:8081": want NAME=URL`},
		{"m=sidecar:envoy,workers=x", Path{}, `m: sidecar "sidecar:envoy,workers=x": workers="x" is not a number`},
	} {
		got, err := ParsePathFlag(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ParsePathFlag(%q) = %+v, %v; want the error %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParsePathFlag(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseWatchFlag(t *testing.T) {
	for _, tc := range []struct {
		in      string
		name    string
		want    Watch
		wantErr string
	}{
		{"nginx=name:nginx", "nginx", Watch{Process: "nginx"}, ""},
		{"p=pid:12", "p", Watch{PID: 12}, ""},
		{"c=cgroup:/sys/fs/cgroup/x.slice", "c", Watch{Cgroup: "/sys/fs/cgroup/x.slice"}, ""},
		{"name:nginx", "", Watch{}, `"name:nginx": want NAME=name:PROCESS, NAME=pid:N or NAME=cgroup:DIR`},
		{"p=only:12", "", Watch{}, "p: "},
	} {
		name, got, err := ParseWatchFlag(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("ParseWatchFlag(%q) = %v, %v; want an error starting %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || name != tc.name || !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("ParseWatchFlag(%q) = %q, %v, %v; want %q, %v", tc.in, name, got, err, tc.name, tc.want)
		}
	}
}

func TestSetPathAndWatch(t *testing.T) {
	s := &Spec{Paths: []Path{{Name: "baseline", URL: "http://a"}, {Name: "nginx", URL: "http://b", Workers: 2}}}
	s.SetPath(Path{Name: "nginx", URL: "http://c"}) // the flag's address for the file's path
	s.SetPath(Path{Name: "mesh", Sidecar: &Sidecar{Proxy: "envoy", Placement: "both"}})
	if got := s.PathIndex("nginx"); got != 1 || s.Paths[1].URL != "http://c" || s.Paths[1].Workers != 2 {
		t.Errorf("nginx at %d: %+v; want 1, http://c, its workers kept", got, s.Paths[1])
	}
	if got := s.PathIndex("mesh"); got != 2 {
		t.Errorf("PathIndex(mesh) = %d, want 2 (added)", got)
	}
	if got := s.PathIndex("none"); got != -1 {
		t.Errorf("PathIndex(none) = %d, want -1", got)
	}
	if err := s.SetWatch("nginx", &Watch{Process: "nginx"}); err != nil || s.Paths[1].Watch.Process != "nginx" {
		t.Errorf("SetWatch(nginx): %v, %+v", err, s.Paths[1].Watch)
	}
	if err := s.SetWatch("envoy", &Watch{Process: "envoy"}); err == nil || err.Error() != "envoy: no path named envoy" {
		t.Errorf("SetWatch(envoy) = %v, want envoy: no path named envoy", err)
	}
}

// FuzzParsePayloads: a list read is one size per comma, each what
// ParseSize reads alone, within 0 to 1 GiB; the list printed back reads the same.
func FuzzParsePayloads(f *testing.F) {
	for _, s := range []string{"100", "100,1KiB,1MiB", " 1k , 2k", "1e3", ",", "1GiB,0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParsePayloads(s)
		if err != nil {
			return
		}
		parts := strings.Split(s, ",")
		if len(got) != len(parts) {
			t.Fatalf("ParsePayloads(%q) = %v: %d sizes for %d parts", s, got, len(got), len(parts))
		}
		back := make([]string, len(got))
		for i, n := range got {
			if n < 0 || n > 1<<30 {
				t.Fatalf("ParsePayloads(%q)[%d] = %d: out of 0..1GiB", s, i, n)
			}
			back[i] = FormatSize(n)
		}
		again, err := ParsePayloads(strings.Join(back, ","))
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("ParsePayloads(%q) = %v, printed %v, read back %v, %v", s, got, back, again, err)
		}
	})
}

// FuzzParsePathFlag: a path read has the name before the first '=', and
// either a URL (what follows it) or a sidecar, never both.
func FuzzParsePathFlag(f *testing.F) {
	for _, s := range []string{"a=http://h", "m=sidecar:envoy,mode=client,mtls", "x", "=", "b=sidecar:none"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePathFlag(s)
		if err != nil {
			return
		}
		name, url, _ := strings.Cut(s, "=")
		if p.Name != name {
			t.Fatalf("ParsePathFlag(%q).Name = %q, want %q", s, p.Name, name)
		}
		if (p.Sidecar != nil) == (p.URL != "") && url != "" {
			t.Fatalf("ParsePathFlag(%q) = %+v: want a URL or a sidecar", s, p)
		}
		if p.Sidecar == nil && p.URL != url {
			t.Fatalf("ParsePathFlag(%q).URL = %q, want %q", s, p.URL, url)
		}
	})
}
