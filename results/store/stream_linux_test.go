package store

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A Stream to a FIFO that no process reads is an error at its first
// write, not a FIFO opened read-write that fills and waits unread.
func TestCreateOnWriteFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	s := CreateOnWrite(fifo, nil)
	s.Write([]byte(strings.Repeat("x", 1<<17))) // past the buffer and the pipe
	if err := s.Commit(); err == nil || !strings.Contains(err.Error(), "no process reads") {
		t.Errorf("Commit: %v, want the FIFO's missing reader", err)
	}
}
