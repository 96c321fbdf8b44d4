package store

import (
	"bytes"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// needRoot skips a test that needs root (mknod), and fails it under CI,
// which runs the tests as root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this test needs root (mknod): CI runs the tests as root")
		}
		t.Skip("needs root: mknod makes the device node")
	}
}

func mustWrite(t *testing.T, path, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, to, link string) {
	t.Helper()
	if err := os.Symlink(to, link); err != nil {
		t.Fatal(err)
	}
}

// checkContent checks that path holds want and has mode.
func checkContent(t *testing.T, path, want string, mode fs.FileMode) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("%s holds %q, want %q", path, b, want)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != mode {
		t.Errorf("%s has mode %v, want %v", path, fi.Mode(), mode)
	}
}

// checkLink checks that link is still a symbolic link to to.
func checkLink(t *testing.T, link, to string) {
	t.Helper()
	got, err := os.Readlink(link)
	if err != nil {
		t.Fatalf("%s is no longer a symbolic link: %v", link, err)
	}
	if got != to {
		t.Errorf("%s links to %q, want %q", link, got, to)
	}
}

// noTemporaries checks that nothing but want is left in dir.
func noTemporaries(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("%s holds %v, want %v", dir, names, want)
	}
}

// A regular file is replaced atomically and keeps its mode; a new path is
// made 0644.
func TestWriteFileRegular(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []fs.FileMode{0o600, 0o755, 0o640} {
		path := filepath.Join(dir, "f"+strconv.Itoa(int(mode)))
		mustWrite(t, path, "old", mode)
		if err := WriteFile(path, []byte("new")); err != nil {
			t.Fatal(err)
		}
		checkContent(t, path, "new", mode)
	}
	path := filepath.Join(dir, "new.json")
	if err := WriteFile(path, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	checkContent(t, path, "{}", 0o644)
	noTemporaries(t, dir, "f384", "f416", "f493", "new.json")
}

// A symbolic link is resolved and its target replaced; the link stays a
// link. So does every link of a chain, relative or absolute, through a
// linked directory; a dangling link's target is made.
func TestWriteFileThroughLinks(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "t.txt"), "old", 0o600)
	link := filepath.Join(dir, "link")
	mustSymlink(t, "t.txt", link)
	if err := WriteFile(link, []byte("one")); err != nil {
		t.Fatal(err)
	}
	checkLink(t, link, "t.txt")
	checkContent(t, filepath.Join(dir, "t.txt"), "one", 0o600)

	// a → b (relative) → sub/c (absolute) → ../t.txt (relative to sub).
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "../t.txt", filepath.Join(dir, "sub", "c"))
	mustSymlink(t, filepath.Join(dir, "sub", "c"), filepath.Join(dir, "b"))
	mustSymlink(t, "b", filepath.Join(dir, "a"))
	if err := WriteFile(filepath.Join(dir, "a"), []byte("two")); err != nil {
		t.Fatal(err)
	}
	checkLink(t, filepath.Join(dir, "a"), "b")
	checkLink(t, filepath.Join(dir, "b"), filepath.Join(dir, "sub", "c"))
	checkLink(t, filepath.Join(dir, "sub", "c"), "../t.txt")
	checkContent(t, filepath.Join(dir, "t.txt"), "two", 0o600)

	// Through a linked directory: the file in the directory linked to.
	mustSymlink(t, "sub", filepath.Join(dir, "subl"))
	if err := WriteFile(filepath.Join(dir, "subl", "d.txt"), []byte("three")); err != nil {
		t.Fatal(err)
	}
	checkContent(t, filepath.Join(dir, "sub", "d.txt"), "three", 0o644)

	// A dangling link: its target is made, the link kept.
	mustSymlink(t, "later.txt", filepath.Join(dir, "dangling"))
	if err := CheckWritable(filepath.Join(dir, "dangling")); err != nil {
		t.Errorf("CheckWritable of a dangling link: %v", err)
	}
	if err := WriteFile(filepath.Join(dir, "dangling"), []byte("four")); err != nil {
		t.Fatal(err)
	}
	checkLink(t, filepath.Join(dir, "dangling"), "later.txt")
	checkContent(t, filepath.Join(dir, "later.txt"), "four", 0o644)
	noTemporaries(t, dir, "a", "b", "dangling", "later.txt", "link", "sub", "subl", "t.txt")
	noTemporaries(t, filepath.Join(dir, "sub"), "c", "d.txt")

	// A loop of links is an error naming the path, not a hang.
	mustSymlink(t, "loop2", filepath.Join(dir, "loop1"))
	mustSymlink(t, "loop1", filepath.Join(dir, "loop2"))
	if err := WriteFile(filepath.Join(dir, "loop1"), []byte("x")); err == nil || !strings.Contains(err.Error(), "loop1") {
		t.Errorf("a loop of links: %v", err)
	}
	if err := CheckWritable(filepath.Join(dir, "loop1")); err == nil {
		t.Error("CheckWritable takes a loop of links")
	}
}

// A FIFO with a reader receives the bytes, more than a pipe holds, and
// stays a FIFO; one without a reader is an error at once, not a wait
// forever, from CheckWritable before any work as from WriteFile and Create.
func TestWriteFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(fifo); err == nil || err.Error() != "cannot write "+fifo+": it is a FIFO that no process reads: start its reader first" {
		t.Errorf("CheckWritable of a FIFO without a reader: %v", err)
	}
	if err := WriteFile(fifo, []byte("x")); err == nil || !strings.Contains(err.Error(), "no process reads") {
		t.Errorf("a FIFO without a reader: %v", err)
	}
	if w, err := Create(fifo); err == nil {
		w.Close()
		t.Error("Create of a FIFO without a reader: no error")
	} else if !strings.Contains(err.Error(), "no process reads") {
		t.Errorf("Create of a FIFO without a reader: %v", err)
	}
	// The reader opens it read-write, which never waits, so it is there
	// before the write; it reads exactly what is sent.
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB: past the pipe's 64 KiB
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(data))
		n, _ := io.ReadFull(r, b)
		got <- b[:n]
	}()
	if err := WriteFile(fifo, data); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is now %v (%v)", fi.Mode(), err) // and its reader waits for nothing
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Errorf("the reader got %d bytes, want the %d written", len(b), len(data))
	}
	noTemporaries(t, dir, "fifo")
}

// CheckWritable keeps open the FIFO it found a reader on, for the write:
// a reader that stops at the end of its input, as cat does, gets the
// bytes, not an end made by the check's close; Create writes it so too.
func TestCheckWritableHoldsFIFO(t *testing.T) {
	for _, stream := range []bool{false, true} {
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := unix.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckWritable(fifo); err != nil {
			t.Fatalf("CheckWritable of a FIFO with a reader: %v", err)
		}
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(r) // to the end: the last writer's close
			got <- b
		}()
		if stream {
			w, err := Create(fifo)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, "line 1\n")
			io.WriteString(w, "line 2\n")
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		} else if err := WriteFile(fifo, []byte("line 1\nline 2\n")); err != nil {
			t.Fatal(err)
		}
		if b := <-got; string(b) != "line 1\nline 2\n" {
			t.Errorf("stream %v: the reader got %q", stream, b)
		}
		r.Close()
	}
}

// A character device made here (a copy of /dev/null: major 1, minor 3)
// is written, and stays a device.
func TestWriteFileCharDevice(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(null); err != nil {
		t.Fatalf("CheckWritable of a device: %v", err)
	}
	if err := WriteFile(null, []byte("into the void")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(null)
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("the device is now %v (%v)", fi.Mode(), err)
	}
	var st unix.Stat_t
	if err := unix.Stat(null, &st); err != nil || unix.Major(st.Rdev) != 1 || unix.Minor(st.Rdev) != 3 {
		t.Errorf("the device is now %d,%d (%v)", unix.Major(st.Rdev), unix.Minor(st.Rdev), err)
	}
	// Through a link, as /dev/stdout is one.
	mustSymlink(t, "null", filepath.Join(dir, "link"))
	if err := WriteFile(filepath.Join(dir, "link"), []byte("again")); err != nil {
		t.Fatal(err)
	}
	checkLink(t, filepath.Join(dir, "link"), "null")
	if fi, err := os.Lstat(null); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("the device is now %v (%v)", fi.Mode(), err)
	}
	noTemporaries(t, dir, "link", "null")
}

// A Unix socket takes the bytes as a client; the socket stays.
func TestWriteFileSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(c)
		c.Close()
		got <- b
	}()
	if err := WriteFile(sock, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(sock); err != nil || fi.Mode()&fs.ModeSocket == 0 {
		t.Fatalf("the socket is now %v (%v)", fi.Mode(), err) // and its server waits for nobody
	}
	if b := <-got; string(b) != "hello" {
		t.Errorf("the socket's server got %q", b)
	}
}

// A link into /proc (as /dev/stdout → /proc/self/fd/1) is written
// through to what the process holds open, here a pipe, without a
// temporary file in /proc.
func TestWriteFileProcLink(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	dir := t.TempDir()
	link := filepath.Join(dir, "stdout")
	fd := "/proc/self/fd/" + strconv.Itoa(int(w.Fd()))
	mustSymlink(t, fd, link)
	if err := CheckWritable(link); err != nil {
		t.Fatalf("CheckWritable: %v", err)
	}
	if err := WriteFile(link, []byte("through")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, _ := io.ReadAll(r)
	if string(b) != "through" {
		t.Errorf("the pipe got %q", b)
	}
	checkLink(t, link, fd)
}

// CheckWritable: "-" is standard output; a directory, or a path whose
// directory is missing, is not writable.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable("-"); err != nil {
		t.Errorf(`CheckWritable("-"): %v`, err)
	}
	if err := CheckWritable(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	mustSymlink(t, "nodir/x", filepath.Join(dir, "link"))
	if err := CheckWritable(filepath.Join(dir, "link")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a link into a missing directory: %v", err)
	}
	if err := CheckWritable(filepath.Join(dir, "new.json")); err != nil {
		t.Errorf("a new file: %v", err)
	}
	noTemporaries(t, dir, "link")
}
