package results_test

import (
	"strings"
	"testing"

	"loadgen/results"
)

func TestParseLabels(t *testing.T) {
	l, err := results.ParseLabels([]string{"mesh=istio", "build=4.2=rc1", "mesh.version=1.24", "note=a b"})
	if err != nil {
		t.Fatal(err)
	}
	want := results.Labels{"mesh": "istio", "build": "4.2=rc1", "mesh.version": "1.24", "note": "a b"}
	if !l.Equal(want) {
		t.Fatalf("got %v, want %v", l, want)
	}
	if s := l.String(); s != "build=4.2=rc1,mesh=istio,mesh.version=1.24,note=a b" {
		t.Errorf("String: %q", s)
	}
	if l, err := results.ParseLabels(nil); l != nil || err != nil {
		t.Errorf("no flags: %v, %v", l, err)
	}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"=x"}, "empty key"},
		{[]string{"k"}, "want KEY=VALUE"},
		{[]string{"k="}, "empty value"},
		{[]string{"a=1", "a=2"}, `key "a" given twice`},
		{[]string{"a.b=1", "a-b=2"}, `both "a_b" in Prometheus`},
		{[]string{"a b=1"}, "no spaces"},
		{[]string{"a,b=1"}, "no spaces, commas"},
		{[]string{"a=x\ny"}, "control"},
		{[]string{"a=" + strings.Repeat("x", results.MaxLabelLen+1)}, "longer"},
	} {
		_, err := results.ParseLabels(c.flags)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: err %v, want one line with %q", c.flags, err, c.want)
		}
	}
}

func TestPromName(t *testing.T) {
	for k, want := range map[string]string{
		"mesh": "mesh", "mesh.version": "mesh_version", "app-name": "app_name", "9lives": "_9lives",
		"__x": "label__x", "Zone_A": "Zone_A", "é": "_",
	} {
		if got := results.PromName(k); got != want {
			t.Errorf("PromName(%q) = %q, want %q", k, got, want)
		}
	}
}

// FuzzParseLabels checks that, whatever the flags, ParseLabels answers
// without panicking; what it accepts reads back the same from its String's
// parts, and every Prometheus name it makes is a valid, distinct one.
func FuzzParseLabels(f *testing.F) {
	for _, s := range []string{"mesh=istio", "=x", "k", "a=1\x00a=2", "a.b=1\x00a_b=2", "__x=1", "9=9", "é=ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flags := strings.Split(s, "\x00")
		l, err := results.ParseLabels(flags)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if len(l) != len(flags) {
			t.Fatalf("%d flags, %d labels", len(flags), len(l))
		}
		var again []string
		for i, f := range l.Flags() {
			if i%2 == 1 {
				again = append(again, f)
			}
		}
		back, err := results.ParseLabels(again)
		if err != nil || !back.Equal(l) {
			t.Fatalf("%q read back as %v, %v", l.Flags(), back, err)
		}
		if err := l.Check(); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for k := range l {
			p := results.PromName(k)
			if !validPromName(p) || seen[p] {
				t.Fatalf("key %q: Prometheus name %q invalid or shared", k, p)
			}
			seen[p] = true
		}
	})
}

func validPromName(s string) bool {
	if s == "" || strings.HasPrefix(s, "__") {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func TestCommonLabels(t *testing.T) {
	common, other := results.CommonLabels([]results.Labels{
		{"mesh": "istio", "build": "1", "a": "x"},
		{"mesh": "istio", "build": "2"},
		{"mesh": "istio", "build": "1", "z": "y"},
	})
	if !common.Equal(results.Labels{"mesh": "istio"}) || strings.Join(other, ",") != "a,build,z" {
		t.Errorf("common %v, other %v", common, other)
	}
	if common, other := results.CommonLabels(nil); common != nil || other != nil {
		t.Errorf("none: %v, %v", common, other)
	}
}
