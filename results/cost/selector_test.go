package cost

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Selector
		str  string
	}{
		{"pid:123", Selector{PIDs: []int{123}, Children: true}, "pid:123"},
		{"pid:123,456", Selector{PIDs: []int{123, 456}, Children: true}, "pid:123,456"},
		{" pid: 123 , 456 ,123 ", Selector{PIDs: []int{123, 456}, Children: true}, "pid:123,456"},
		{"tree:1", Selector{PIDs: []int{1}, Children: true}, "pid:1"},
		{"only:123", Selector{PIDs: []int{123}}, "only:123"},
		{"only:1,2", Selector{PIDs: []int{1, 2}}, "only:1,2"},
		{"name:nginx", Selector{Name: "nginx"}, "name:nginx"},
		{"nginx", Selector{Name: "nginx"}, "name:nginx"},
		{"envoy", Selector{Name: "envoy"}, "name:envoy"},
		{"kworker/0:1", Selector{Name: "kworker/0:1"}, "name:kworker/0:1"},
		{"name:pid:1", Selector{Name: "pid:1"}, "name:pid:1"},
		{"name:a b", Selector{Name: "a b"}, "name:a b"},
		{"cgroup:/sys/fs/cgroup/system.slice/nginx.service", Selector{Cgroup: "/sys/fs/cgroup/system.slice/nginx.service"}, "cgroup:/sys/fs/cgroup/system.slice/nginx.service"},
		{"cgroup:/sys/fs/cgroup//kubepods/../kubepods/pod1/", Selector{Cgroup: "/sys/fs/cgroup/kubepods/pod1"}, "cgroup:/sys/fs/cgroup/kubepods/pod1"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSelector(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
			if s := got.String(); s != tc.str {
				t.Errorf("String() = %q, want %q", s, tc.str)
			}
		})
	}
}

func TestParseSelectorErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{"pid:", "process ids"},
		{"pid:abc", `"abc" is not a process id`},
		{"pid:0", `"0" is not a process id`},
		{"pid:-5", `"-5" is not a process id`},
		{"pid:1,,2", `"" is not a process id`},
		{"pid:99999999", "not a process id"},
		{"tree:", "process ids"},
		{"only:", "process ids"},
		{"only:x", `"x" is not a process id`},
		{"name:", "empty name"},
		{"name:a\x00b", "NUL"},
		{"name:" + strings.Repeat("x", 256), "at most 255"},
		{"cgroup:", "absolute"},
		{"cgroup:sys/fs/cgroup/x", "absolute"},
		{"cgroups:/sys/fs/cgroup/x", `unknown kind "cgroups"`},
		{"PID:1", `unknown kind "PID"`},
		{"java:x", "name:NAME"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseSelector(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseSelector(%q) = %v, want an error with %q", tc.in, err, tc.want)
			}
		})
	}
}

// A selector that parses is valid and reads back from its String.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{
		"pid:1", "pid:123,456", "tree:1,2", "only:3,4", "name:nginx", "nginx", "kworker/0:1",
		"cgroup:/sys/fs/cgroup/a/../b", "cgroup:/a /.", "name:pid:1", " x ", "pid:+5", "a:b:c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		if err := sel.validate(); err != nil {
			t.Fatalf("ParseSelector(%q) = %#v, invalid: %v", s, sel, err)
		}
		again, err := ParseSelector(sel.String())
		if err != nil {
			t.Fatalf("ParseSelector(%q).String() = %q does not parse: %v", s, sel.String(), err)
		}
		if !reflect.DeepEqual(again, sel) {
			t.Fatalf("ParseSelector(%q) = %#v, read back from %q as %#v", s, sel, sel.String(), again)
		}
	})
}
