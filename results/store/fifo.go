package store

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
)

// errNoReader is a FIFO's open for writing when no process reads it.
var errNoReader = errors.New("it is a FIFO that no process reads: start its reader first")

// held are the FIFOs CheckWritable found a reader on, open for writing by
// their resolved path until their write (WriteFile, Create) takes them: a
// reader sees the end of its input when the last writer closes, so a FIFO
// opened to check and closed would end the very reader it found.
var held = struct {
	sync.Mutex
	m map[string]*os.File
}{m: map[string]*os.File{}}

// holdFIFO opens the FIFO at path for writing, without waiting: an error
// when no process reads it, else kept open for its write.
func holdFIFO(path string) error {
	held.Lock()
	defer held.Unlock()
	if _, ok := held.m[path]; ok {
		return nil
	}
	f, err := openFIFO(path)
	if err != nil {
		return err
	}
	held.m[path] = f
	return nil
}

// takeFIFO is the FIFO at path open for writing: the one CheckWritable
// held, else opened now.
func takeFIFO(path string) (*os.File, error) {
	held.Lock()
	f, ok := held.m[path]
	delete(held.m, path)
	held.Unlock()
	if ok {
		return f, nil
	}
	return openFIFO(path)
}

// openFIFO opens a FIFO for writing without blocking (Go's poller then
// waits while the pipe is full): ENXIO, no reader, is errNoReader.
func openFIFO(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, errNoReader
	}
	return f, err
}

// Create opens path to be written as a stream (an interval log, written
// while a run goes on), on WriteFile's rules for what is there: a device,
// FIFO or socket is written in place (a FIFO needs its reader: none is an
// error, not a pipe that fills and waits forever), a link is followed to
// its target, and a regular file or a new path is created or emptied.
// Errors name path.
func Create(path string) (io.WriteCloser, error) {
	d, err := resolve(path)
	if err != nil {
		return nil, namePath(path, err)
	}
	var w io.WriteCloser
	switch {
	case d.info != nil && d.info.Mode()&os.ModeNamedPipe != 0:
		w, err = takeFIFO(d.path)
	case d.info != nil && d.info.Mode()&os.ModeSocket != 0:
		w, err = dialSocket(d.path)
	case d.direct:
		w, err = os.OpenFile(d.path, os.O_WRONLY, 0)
	default:
		w, err = os.Create(d.path)
	}
	if err != nil {
		return nil, namePath(path, err)
	}
	return w, nil
}
