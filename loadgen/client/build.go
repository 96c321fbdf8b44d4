package client

import (
	"errors"

	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/compare"
)

// Build is the one way a run's Dialer is made, by `loadgen run` and by
// every step of a sweep: s, the client's options, takes the target,
// headers, payload size, connections, timeout and streams of c, the run's
// configuration (a --window's streams added: WindowStreams); New checks
// and completes it, and what a result keeps of it is recorded in c, even
// when New failed.
func Build(s *Spec, c *results.Config) (protocol.Dialer, error) {
	c.Streams = WindowStreams(s.Protocol, c.Streams, s.Window)
	s.Target, s.Headers, s.Size = c.Target, c.Headers, c.Size
	s.Connections, s.Timeout, s.Streams = c.Connections, c.Timeout.D(), c.Streams
	d, err := New(s)
	s.Record(c)
	return d, err
}

// BuildExit is the exit status of a run whose Dialer could not be built
// (Build's error, or the error of an option it takes): Failed when the
// target could not be reached (ErrUnreachable: a run failure), Usage for
// any other error (the command line must change; nothing ran), OK for
// none. compare.NotStarted turns Failed into Interrupted when Ctrl-C cut
// the connect short.
func BuildExit(err error) compare.Exit {
	switch {
	case err == nil:
		return compare.OK
	case errors.Is(err, ErrUnreachable):
		return compare.Failed
	}
	return compare.Usage
}
