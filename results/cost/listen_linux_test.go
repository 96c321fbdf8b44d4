package cost

import (
	"net"
	"os"
	"reflect"
	"slices"
	"testing"
)

// Trees groups a process with its descendants in the set, root first;
// a process whose parent is outside the set roots a tree of its own.
func TestTrees(t *testing.T) {
	c := startChild(t, "", "tree")
	var r procReader
	kids, _ := r.childrenOf(c.pid)
	slices.Sort(kids)
	if len(kids) != 2 {
		t.Fatalf("child %d has children %v, want 2", c.pid, kids)
	}
	if got, want := Trees([]int{kids[1], c.pid, kids[0]}), [][]int{{c.pid, kids[0], kids[1]}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Trees(child and its children) = %v, want %v", got, want)
	}
	if got, want := Trees([]int{kids[1], kids[0]}), [][]int{{kids[0]}, {kids[1]}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Trees(two siblings without their parent) = %v, want %v", got, want)
	}
	if got, want := Trees([]int{kids[0], c.pid, os.Getpid()}), [][]int{{os.Getpid(), min(c.pid, kids[0]), max(c.pid, kids[0])}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Trees(three generations) = %v, want %v", got, want)
	}
	// Two trees, in their roots' pid order: this test's pid is not always
	// the lower (pids wrap around on a machine that has started many).
	want := [][]int{{os.Getpid()}, {kids[0]}}
	slices.SortFunc(want, func(a, b []int) int { return a[0] - b[0] })
	if got := Trees([]int{kids[0], os.Getpid()}); !reflect.DeepEqual(got, want) {
		t.Errorf("Trees(a grandchild and its grandparent, no parent between) = %v, want %v", got, want)
	}
}

// Listeners finds the process listening on a port, and nothing on a port
// no one listens on.
func TestListeners(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if got := Listeners(port); !got[os.Getpid()] || len(got) != 1 {
		t.Errorf("Listeners(%d) = %v, want this process (%d) alone", port, got, os.Getpid())
	}
	// A port held by a connected, non-listening socket.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	local := c.LocalAddr().(*net.TCPAddr).Port
	if got := Listeners(local); got != nil {
		t.Errorf("Listeners(%d), a connection's port, = %v, want nil", local, got)
	}
	for _, p := range []int{0, -1, 70000} {
		if got := Listeners(p); got != nil {
			t.Errorf("Listeners(%d) = %v, want nil", p, got)
		}
	}
}
