//go:build linux

package heldp

import (
	"os/exec"
	"strings"
	"testing"
)

// The calls a loop that keeps its P blocks in must stay functions of their
// own: their stack check is where the runtime stops the loop (preemption,
// a stop of the world) once the signal that asks ended the call with
// EINTR. Inlined into the loop, the check would be gone and the loop,
// calling again, would hold its P against the runtime. The compiler says
// why it does not inline each one (-m=2): marked go:noinline.
func TestNotInlined(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go" // where the Makefile puts Go on PATH
	}
	out, err := exec.Command(goBin, "build", "-gcflags=-m=2", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m=2: %v\n%s", err, out)
	}
	for _, fn := range []string{"Wait", "WaitFor", "Recv"} {
		if !strings.Contains(string(out), "cannot inline "+fn+": marked go:noinline") {
			t.Errorf("%s may be inlined (want //go:noinline): the compiler said:\n%s", fn, grep(string(out), fn))
		}
	}
}

func grep(out, fn string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " "+fn+":") || strings.Contains(l, " "+fn+" ") || strings.Contains(l, "inline "+fn) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
