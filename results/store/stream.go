package store

import (
	"bufio"
	"io"
)

// Stream is a file a command writes while it goes on (an interval log),
// created (or emptied) at its first write, not before: a command that
// fails before it writes leaves what is at the path as it was, and one
// killed midway leaves what it wrote so far. Writes are buffered; Commit
// writes the rest and closes the file, Discard closes it without the rest.
type Stream struct {
	w *bufio.Writer
	f *onWrite
}

// CreateOnWrite is a Stream to path, opened on Create's rules at the
// first write (a FIFO is written, never opened read-write, so that with
// no reader it is an error, not a pipe that fills unread), or to stdout
// when path names standard output (IsStdout: "-").
func CreateOnWrite(path string, stdout io.Writer) *Stream {
	f := &onWrite{path: path, stdout: stdout}
	return &Stream{w: bufio.NewWriter(f), f: f}
}

// Write buffers p; the file is opened when the buffer first goes out.
func (s *Stream) Write(p []byte) (int, error) { return s.w.Write(p) }

// Commit writes what is buffered and closes the file: the first error of
// the two, or of an earlier write.
func (s *Stream) Commit() error {
	err := s.w.Flush()
	if s.f.f != nil {
		if cerr := s.f.f.Close(); err == nil {
			err = cerr
		}
		s.f.f = nil
	}
	return err
}

// Discard closes the file, if the stream began, without the buffered
// rest; after Commit it does nothing.
func (s *Stream) Discard() {
	if s.f.f != nil {
		s.f.f.Close()
		s.f.f = nil
	}
}

// onWrite is the file under a Stream's buffer, created at its first write.
type onWrite struct {
	path   string
	stdout io.Writer
	f      io.WriteCloser
	err    error
}

func (o *onWrite) Write(p []byte) (int, error) {
	if IsStdout(o.path) {
		return o.stdout.Write(p)
	}
	if o.f == nil && o.err == nil {
		o.f, o.err = Create(o.path)
	}
	if o.err != nil {
		return 0, o.err
	}
	return o.f.Write(p)
}
