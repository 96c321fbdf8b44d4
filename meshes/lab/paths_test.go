package lab

import (
	"slices"
	"strings"
	"testing"
)

// --paths: the lab's path names, commas and spaces around them ignored;
// none is every path (nil); an unknown name is refused with the list.
func TestParsePaths(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{" , ", nil, ""},
		{NodeNode, []string{NodeNode}, ""},
		{Loopback + ", " + PodServiceRemote + ",", []string{Loopback, PodServiceRemote}, ""},
		{NodeNode + ",pod-to-moon", nil, `--paths: no path "pod-to-moon": the lab has ` + strings.Join(PathNames(), ", ")},
	} {
		got, err := ParsePaths(tc.in)
		if !slices.Equal(got, tc.want) || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("ParsePaths(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}
