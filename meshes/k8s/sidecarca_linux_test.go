package k8s

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"loadgen/meshes/leftover"
)

// The CA's temporary directory (it holds the CA's key) is marked with the
// pid, as loadgen cleanup finds a killed run's, and removed once the
// Secret is made: an inotify watch on $TMPDIR sees it made.
func TestSidecarCATempDirMarked(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, tmp, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	sec, err := Options{Namespace: "ns"}.sidecarIdentities()
	if err != nil {
		t.Fatal(err)
	}
	if len(sec.Data[keyCA]) == 0 {
		t.Fatal("no CA in the Secret")
	}
	var made []string
	buf := make([]byte, 64<<10)
	n, err := unix.Read(fd, buf)
	if err != nil {
		t.Fatalf("no directory made in $TMPDIR: %v", err)
	}
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
		if ev.Mask&unix.IN_ISDIR != 0 {
			made = append(made, string(bytes.TrimRight(name, "\x00")))
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
	if len(made) == 0 {
		t.Fatal("no directory made in $TMPDIR")
	}
	for _, d := range made {
		if pid, ok := leftover.ParseDir(d); !ok || pid != os.Getpid() {
			t.Errorf("%s is not marked with this process's pid: loadgen cleanup would not find it after a kill", d)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
