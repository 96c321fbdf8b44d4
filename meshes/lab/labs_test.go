package lab

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// labOf is a lab of mode holding paths, as Start leaves one, with no
// namespace built.
func labOf(mode Mode, paths ...Path) *Lab {
	for i := range paths {
		paths[i].Mode = mode
	}
	return &Lab{mode: mode, paths: paths}
}

func twoLabs() []*Lab {
	return []*Lab{
		labOf(HostGW,
			Path{Name: Loopback, Baseline: true, ClientNS: "h-c", ServerNS: "h-c", Listen: "127.0.0.1:9", Dial: "127.0.0.1:9"},
			Path{Name: PodPodOtherNode, ClientNS: "h-p1", ServerNS: "h-p2", Listen: "10.0.2.2:9", Dial: "10.0.2.2:9"},
			Path{Name: PodServiceRemote, ClientNS: "h-p1", ServerNS: "h-p2", Listen: "10.0.2.2:9", Dial: "10.96.0.1:9", Service: true}),
		labOf(Macvlan,
			Path{Name: Loopback, Baseline: true, ClientNS: "m-c", ServerNS: "m-c", Listen: "127.0.0.1:9", Dial: "127.0.0.1:9"},
			Path{Name: PodPodOtherNode, ClientNS: "m-p1", ServerNS: "m-p2", Listen: "10.1.2.2:9", Dial: "10.1.2.2:9"},
			Path{Name: PodServiceRemote, NotApplicable: "a macvlan pod never reaches a Service"}),
	}
}

// TestLoadPaths: applicable paths only, named MODE.PATH, the baseline
// once, from the first lab, under its own name.
func TestLoadPaths(t *testing.T) {
	for _, tc := range []struct {
		name string
		labs []*Lab
		want []LoadPath
	}{
		{"none", nil, nil},
		{"two modes", twoLabs(), []LoadPath{
			{Name: Loopback, Dial: "127.0.0.1:9", NetNS: "h-c", Baseline: true},
			{Name: "host-gw." + PodPodOtherNode, Dial: "10.0.2.2:9", NetNS: "h-p1"},
			{Name: "host-gw." + PodServiceRemote, Dial: "10.96.0.1:9", NetNS: "h-p1"},
			{Name: "macvlan." + PodPodOtherNode, Dial: "10.1.2.2:9", NetNS: "m-p1"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LoadPaths(tc.labs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("LoadPaths =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// TestServers: one target per server namespace and address the applicable
// paths need, in their order, each in its own lab.
func TestServers(t *testing.T) {
	labs := twoLabs()
	type server struct {
		mode       Mode
		ns, listen string
	}
	want := []server{{HostGW, "h-c", "127.0.0.1:9"}, {HostGW, "h-p2", "10.0.2.2:9"}, {Macvlan, "m-c", "127.0.0.1:9"}, {Macvlan, "m-p2", "10.1.2.2:9"}}
	var got []server
	for _, s := range Servers(labs) {
		got = append(got, server{s.Lab.Mode(), s.NS, s.Listen})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Servers = %+v, want %+v", got, want)
	}
}

// TestStartModesSkipsWhatTheKernelLacks: a mode the kernel lacks is told
// and left out; a lab that cannot run at all, or fails to start, stops
// with the labs started so far; a lab none of whose modes this kernel
// has stops, saying why each was skipped.
func TestStartModesSkipsWhatTheKernelLacks(t *testing.T) {
	lacks := &Unavailable{Mode: EBPF, Reason: "no eBPF", ModeOnly: true}
	noRoot := &Unavailable{Reason: "lab: needs root"}
	noVXLAN := &Unavailable{Mode: VXLAN, Reason: "no vxlan module", ModeOnly: true}
	noHostGW := &Unavailable{Mode: HostGW, Reason: "no routes", ModeOnly: true}
	for _, tc := range []struct {
		name        string
		unavailable map[Mode]error
		startErr    map[Mode]error
		wantStarted []Mode
		wantSkipped []Mode
		wantErr     error
	}{
		{"all run", nil, nil, []Mode{HostGW, EBPF, VXLAN}, nil, nil},
		{"one lacking", map[Mode]error{EBPF: lacks}, nil, []Mode{HostGW, VXLAN}, []Mode{EBPF}, nil},
		{"no root stops", map[Mode]error{EBPF: noRoot}, nil, []Mode{HostGW}, nil, noRoot},
		{"a failed start stops", nil, map[Mode]error{EBPF: errors.New("ip link: refused")}, []Mode{HostGW}, nil, errors.New("ip link: refused")},
		{"all lacking stops", map[Mode]error{HostGW: noHostGW, EBPF: lacks, VXLAN: noVXLAN}, nil, nil, []Mode{HostGW, EBPF, VXLAN},
			errors.New("lab: no mode could be built here (host-gw: no routes; ebpf: no eBPF; vxlan: no vxlan module)")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var skipped []Mode
			available := func(c Config) error { return tc.unavailable[c.Mode] }
			start := func(_ context.Context, c Config) (*Lab, error) {
				if c.Paths[0] != "loopback" {
					t.Errorf("the config's paths were not kept: %v", c.Paths)
				}
				if err := tc.startErr[c.Mode]; err != nil {
					return nil, err
				}
				return labOf(c.Mode), nil
			}
			labs, err := startModes(context.Background(), Config{Paths: []string{"loopback"}}, []Mode{HostGW, EBPF, VXLAN},
				func(s Skip) {
					skipped = append(skipped, s.Mode)
					if s.Err != tc.unavailable[s.Mode] {
						t.Errorf("%s skipped for %v, want %v", s.Mode, s.Err, tc.unavailable[s.Mode])
					}
				}, available, start)
			if (err == nil) != (tc.wantErr == nil) || (err != nil && err.Error() != tc.wantErr.Error()) {
				t.Errorf("err %v, want %v", err, tc.wantErr)
			}
			var started []Mode
			for _, l := range labs {
				started = append(started, l.Mode())
			}
			if !reflect.DeepEqual(started, tc.wantStarted) || !reflect.DeepEqual(skipped, tc.wantSkipped) {
				t.Errorf("started %v skipped %v, want %v %v", started, skipped, tc.wantStarted, tc.wantSkipped)
			}
		})
	}
}

// TestSkipWording: a skipped mode is said one way, as the lab skips it
// and in its list after the matrix.
func TestSkipWording(t *testing.T) {
	for _, tc := range []struct {
		skip Skip
		want string
	}{
		{Skip{IPIP, &Unavailable{Mode: IPIP, Reason: "no ipip module: modprobe ipip", ModeOnly: true}}, "skipped mode ipip: no ipip module: modprobe ipip"},
		{Skip{Geneve, errors.New("no geneve")}, "skipped mode geneve: no geneve"},
	} {
		if got := tc.skip.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.skip, got, tc.want)
		}
	}
}

// TestPlannedPaths: a dry run's paths are every mode × wanted path (all
// when none is named), named as LoadPaths names a built lab's, each
// saying where it would go.
func TestPlannedPaths(t *testing.T) {
	for _, tc := range []struct {
		name  string
		modes []Mode
		paths []string
		want  []LoadPath
	}{
		{"none", nil, []string{PodPodOtherNode}, nil},
		{"one", []Mode{"vxlan"}, []string{PodPodOtherNode}, []LoadPath{{Name: "vxlan.pod-pod-other-node", Dial: "lab vxlan: pod-pod-other-node"}}},
		{"two × two", []Mode{"host-gw", "vxlan"}, []string{NodeNode, PodServiceRemote}, []LoadPath{
			{Name: "host-gw.node-node", Dial: "lab host-gw: node-node"}, {Name: "host-gw.pod-service-remote", Dial: "lab host-gw: pod-service-remote"},
			{Name: "vxlan.node-node", Dial: "lab vxlan: node-node"}, {Name: "vxlan.pod-service-remote", Dial: "lab vxlan: pod-service-remote"},
		}},
	} {
		if got := PlannedPaths(tc.modes, tc.paths); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if all := PlannedPaths([]Mode{"udp"}, nil); len(all) != len(PathNames()) || all[0].Name != "udp."+Loopback {
		t.Errorf("every path: %+v", all)
	}
}
