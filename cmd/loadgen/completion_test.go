package main

import (
	"strings"
	"testing"
)

// Shell completion offers the values of -p, --mesh and --class (the
// classes of the --mesh given), through cobra's __complete.
func TestFlagValueCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"run", "-p", ""}, []string{"http1", "h2c", "grpc", "tcp-rr"}, nil},
		{[]string{"sweep", "--protocol", ""}, []string{"http1", "grpc-stream"}, nil},
		{[]string{"k8s", "render", "--mesh", ""}, []string{"istio", "linkerd", "gateway", "ingress-nginx"}, nil},
		{[]string{"k8s", "run", "--mesh", "gateway", "--class", ""}, []string{"nginx", "eg", "amazon-vpc-lattice"}, []string{"contour"}},
		{[]string{"k8s", "render", "--mesh", "ingress", "--class", ""}, []string{"traefik", "haproxy"}, []string{"eg"}},
	} {
		code, out, stderr := cli(t, append([]string{"__complete"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		got := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			if l != "" && !strings.HasPrefix(l, ":") {
				got[strings.SplitN(l, "\t", 2)[0]] = true
			}
		}
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("%v: no %q among %q", tc.args, w, out)
			}
		}
		for _, w := range tc.not {
			if got[w] {
				t.Errorf("%v: %q offered: %q", tc.args, w, out)
			}
		}
	}
}
