package main

import (
	"bufio"
	"io"

	"loadgen/results/store"
)

// checkOutputs checks, before any load, the run's output files
// (store.CheckOutputs) and tells whether one goes to standard output: the
// summary then goes to standard error, so that `loadgen run --json - URL
// | jq` reads JSON only.
func (f *runFlags) checkOutputs() (toStdout bool, err error) {
	return store.CheckOutputs(store.Output{Flag: "--json", Path: f.jsonOut}, store.Output{Flag: "--hlog", Path: f.hlog},
		store.Output{Flag: "--junit", Path: f.check.junit})
}

// hlogFile is --hlog's file, created (or emptied) at the log's first
// write, once the clock has started: a run that fails before its start
// leaves an existing file as it was, and a run killed midway leaves the
// intervals written so far, as it always did.
type hlogFile struct {
	path   string
	f      io.WriteCloser
	err    error
	w      *bufio.Writer
	stdout io.Writer // --hlog -
}

func createHlog(path string, stdout io.Writer) (*hlogFile, error) {
	h := &hlogFile{path: path, stdout: stdout}
	h.w = bufio.NewWriter(h)
	return h, nil
}

func (h *hlogFile) Write(p []byte) (int, error) {
	if store.IsStdout(h.path) {
		return h.stdout.Write(p)
	}
	if h.f == nil && h.err == nil {
		h.f, h.err = store.Create(h.path) // a FIFO written, never opened read-write to fill unread
	}
	if h.err != nil {
		return 0, h.err
	}
	return h.f.Write(p)
}

// commit writes what is buffered and closes the file.
func (h *hlogFile) commit() error {
	err := h.w.Flush()
	if h.f != nil {
		if cerr := h.f.Close(); err == nil {
			err = cerr
		}
		h.f = nil
	}
	return err
}

// discard closes the file, if the log began, without the buffered rest.
func (h *hlogFile) discard() {
	if h.f != nil {
		h.f.Close()
		h.f = nil
	}
}
