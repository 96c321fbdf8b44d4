package study

import (
	"strings"
	"testing"
)

func TestCheckOptions(t *testing.T) {
	meshes := []string{"none", "istio", "linkerd", "sidecar"}
	set := func(flags ...string) func(string) bool {
		return func(name string) bool {
			for _, f := range flags {
				if f == name {
					return true
				}
			}
			return false
		}
	}
	cluster := Options{Kubeconfig: "kc", Workers: 1}
	with := func(o Options, f func(*Options)) Options { f(&o); return o }
	for _, c := range []struct {
		study string
		o     Options
		g     Given
		want  string // a part of the error; "" for none
	}{
		{"mesh-ladder", Options{Workers: 1}, Given{}, ""},
		{"mesh-ladder", cluster, Given{}, ""},
		{"mesh-ladder", with(cluster, func(o *Options) { o.Meshes = []string{"istio", "sidecar:haproxy", "sidecar"} }), Given{}, ""},
		{"mesh-ladder", with(cluster, func(o *Options) { o.Meshes = []string{"none"} }), Given{}, "--meshes none: want some of istio, linkerd, sidecar,"},
		{"mesh-ladder", with(cluster, func(o *Options) { o.Meshes = []string{"nosuch"} }), Given{}, "--meshes nosuch: want some of"},
		{"mesh-ladder", with(cluster, func(o *Options) { o.Meshes = []string{"sidecar:envoy"} }), Given{}, "--meshes sidecar:envoy: the sidecar mesh's proxies are nginx, haproxy, caddy"},
		{"mesh-ladder", with(cluster, func(o *Options) { o.Meshes = []string{"istio"}; o.ProxyImages = map[string]string{"nginx": "n:1"} }), Given{}, "--proxy-image is for the sidecar mesh"},
		{"mesh-ladder", with(cluster, func(o *Options) {
			o.Meshes = []string{"sidecar:nginx"}
			o.ProxyImages = map[string]string{"nginx": "n:1"}
		}), Given{}, ""},
		{"mesh-ladder", with(cluster, func(o *Options) { o.Workers = 0 }), Given{}, "--workers 0: want 1 or more"},
		{"mesh-ladder", Options{Meshes: []string{"istio"}}, Given{}, "--meshes and --workers are for a cluster"},
		{"mesh-ladder", Options{Workers: 3}, Given{Changed: set("workers")}, "--meshes and --workers are for a cluster"},
		{"mesh-ladder", Options{SameNodeOK: true}, Given{}, "--same-node-ok and --prometheus are for a cluster"},
		{"mesh-ladder", Options{Prometheus: "http://127.0.0.1:9090"}, Given{}, "--same-node-ok and --prometheus are for a cluster"},
		{"mesh-ladder", Options{Ladder: "c0t1"}, Given{Changed: set("ladder")}, "--ladder: "},
		{"mesh-ladder", Options{Ladder: "c1t1..c8t8", Payloads: "100, 1KiB"}, Given{Changed: set("ladder", "payloads")}, ""},
		{"mesh-ladder", Options{Payloads: "100,lots"}, Given{Changed: set("payloads")}, `--payloads: payload "lots"`},
		// The ladder's checks come first: a bad ladder on a cluster
		// without workers names the ladder.
		{"mesh-ladder", with(cluster, func(o *Options) { o.Workers = 0; o.Ladder = "c0t1" }), Given{Changed: set("ladder")}, "--ladder: "},
		{"cni-matrix", Options{}, Given{Changed: set("ladder")}, "--ladder is mesh-ladder's (study cni-matrix has its own plan)"},
		{"nginx-sizing", Options{}, Given{Changed: set("proxy-image")}, "--proxy-image is mesh-ladder's"},
		{"nginx-sizing", cluster, Given{}, "study nginx-sizing runs on this machine only"},
		{"cni-matrix", with(cluster, func(o *Options) { o.CNI = "macvlan" }), Given{}, ""},
		{"cni-matrix", with(cluster, func(o *Options) { o.CNI = "cilium" }), Given{}, "--cni cilium: name the datapath as the lab's modes"},
		{"cni-matrix", Options{CNI: "macvlan"}, Given{}, "--cni names a cluster's datapath"},
		{"flannel-backends", with(cluster, func(o *Options) { o.CNI = "vxlan" }), Given{}, "--cni is cni-matrix's: study flannel-backends does not take it"},
		{"flannel-backends", cluster, Given{Checks: true}, "--assert and --junit do not apply to flannel-backends on a cluster"},
		{"flannel-backends", Options{}, Given{Checks: true}, ""},
		{"cni-matrix", Options{}, Given{Changed: set("tolerance")}, "--tolerance is k8s-paths' (study cni-matrix has its own plan)"},
		{"cni-matrix", Options{Image: "img"}, Given{Changed: set("image")}, "--image is for a cluster"},
		{"cni-matrix", with(cluster, func(o *Options) { o.Image = "img" }), Given{Changed: set("image")}, ""},
		{"cni-matrix", Options{}, Given{Changed: set("repeats")}, "--repeats 0: want 1 or more"},
		{"k8s-paths", with(cluster, func(o *Options) { o.Tolerance = "5%" }), Given{}, ""},
		{"k8s-paths", with(cluster, func(o *Options) { o.Tolerance = "x" }), Given{}, "--tolerance: "},
		{"k8s-paths", with(cluster, func(o *Options) { o.Tolerance = "10%"; o.Meshes = []string{"istio"} }), Given{}, "--meshes and --workers are mesh-ladder's"},
		{"k8s-paths", with(cluster, func(o *Options) { o.Tolerance = "10%" }), Given{Changed: set("workers")}, "--meshes and --workers are mesh-ladder's"},
		{"k8s-paths", with(cluster, func(o *Options) { o.Tolerance = "10%" }), Given{Checks: true}, "--assert and --junit do not apply to k8s-paths"},
	} {
		s, err := Lookup(c.study)
		if err != nil {
			t.Fatal(err)
		}
		c.g.Meshes = meshes
		err = s.CheckOptions(c.o, c.g)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %+v: %v, want no error", c.study, c.o, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %+v: %v, want %q", c.study, c.o, err, c.want)
		}
	}
}

func TestParseProxyImages(t *testing.T) {
	for _, c := range []struct {
		flags []string
		want  map[string]string
		err   string
	}{
		{nil, nil, ""},
		{[]string{"haproxy=haproxy:3.0", "nginx=n:1"}, map[string]string{"haproxy": "haproxy:3.0", "nginx": "n:1"}, ""},
		{[]string{"nginx"}, nil, "want PROXY=IMAGE"},
		{[]string{"nginx="}, nil, "want PROXY=IMAGE"},
		{[]string{"envoy=e:1"}, nil, "the sidecar mesh's proxies are nginx, haproxy, caddy"},
		{[]string{"nginx=a", "nginx=b"}, nil, "--proxy-image: nginx given twice"},
	} {
		got, err := ParseProxyImages(c.flags)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.flags, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v %v, want %v", c.flags, got, err, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%q: %s=%q, want %q", c.flags, k, got[k], v)
			}
		}
	}
}
