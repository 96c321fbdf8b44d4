package sweep

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestLab: the lab's sweep of a protocol is the command's base over the
// lab's paths, each sent from its namespace; it is marked as the lab's,
// so a resume by sweep (the demo's) or size is refused with the lab's
// command on the lab's directory, and the lab's own resume is not.
func TestLab(t *testing.T) {
	base := Spec{Protocol: "tcp-rr", Ladder: Ladder{{Connections: 1, Threads: 1}}, Payloads: Payloads{1024},
		Duration: Duration(3 * time.Second), Warmup: Duration(500 * time.Millisecond), Repeats: 1, Rates: Rates{0},
		Paths: []Path{{Name: "left over", URL: "127.0.0.1:1"}}}
	paths := []LabPath{
		{Name: "loopback", Dial: "127.0.0.1:5201", NetNS: "lg1-a", Baseline: true},
		{Name: "vxlan.pod-pod-other-node", Dial: "198.18.1.3:5201", NetNS: "lg1-b"},
	}
	for _, tc := range []struct {
		name      string
		paths     []LabPath
		wantPaths []Path
	}{
		{"built", paths, []Path{
			{Name: "loopback", URL: "127.0.0.1:5201", NetNS: "lg1-a", Baseline: true},
			{Name: "vxlan.pod-pod-other-node", URL: "198.18.1.3:5201", NetNS: "lg1-b"},
		}},
		{"planned", []LabPath{{Name: "vxlan.node-node", Dial: "lab vxlan: node-node"}}, []Path{{Name: "vxlan.node-node", URL: "lab vxlan: node-node"}}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Lab(base, tc.paths)
			if !reflect.DeepEqual(s.Paths, tc.wantPaths) {
				t.Errorf("paths %+v, want %+v", s.Paths, tc.wantPaths)
			}
			if s.Builtin != BuiltinLab || s.Protocol != "tcp-rr" || s.Duration != base.Duration || !reflect.DeepEqual(s.Ladder, base.Ladder) {
				t.Errorf("builtin %q protocol %q duration %v ladder %v: want the lab's, over the base", s.Builtin, s.Protocol, s.Duration, s.Ladder)
			}
			if ResumeKind(s) != ResumeBuiltin {
				t.Errorf("ResumeKind = %v, want ResumeBuiltin", ResumeKind(s))
			}
			for own, want := range map[string]string{
				BuiltinDemo: "--resume: out/tcp-rr holds a loadgen lab run: continue it with loadgen lab -o out --resume",
				BuiltinSize: "--resume: out/tcp-rr holds a loadgen lab run: continue it with loadgen lab -o out --resume",
				BuiltinLab:  "<nil>",
			} {
				if got := fmt.Sprint(ResumeRefusal("out/tcp-rr", s, own)); got != want {
					t.Errorf("ResumeRefusal by %s = %q, want %q", own, got, want)
				}
			}
		})
	}
	if len(base.Paths) != 1 || base.Builtin != "" {
		t.Errorf("Lab changed its base: %+v", base)
	}
}
