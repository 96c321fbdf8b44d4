package loadgen

import (
	"fmt"

	"loadgen/loadgen/protocol"
	"loadgen/results"
)

// filesReserved are the descriptors a run needs besides its connections:
// the standard streams, the preflight's spare, log and result files, the
// runtime's own.
const filesReserved = 64

// filesNeeded is how many file descriptors a run of c opens at most: a
// socket per connection (streams share theirs) and, open loop, a timerfd per
// worker.
func filesNeeded(c results.Config, openLoop bool) int {
	n := c.Connections + filesReserved
	if openLoop {
		n += c.Connections * max(1, c.Streams)
	}
	return n
}

// checkFileLimit refuses a run that cannot open its connections under the
// process's file descriptor limit (Go raises the soft limit to the hard one
// at start), with how many connections the limit allows.
func checkFileLimit(c results.Config, openLoop bool, limit uint64) error {
	need := filesNeeded(c, openLoop)
	if limit == 0 || uint64(need) <= limit {
		return nil
	}
	per := 1
	if openLoop {
		per += max(1, c.Streams)
	}
	allowed := max(0, (int(limit)-filesReserved)/per)
	return fmt.Errorf("%d connections need about %d file descriptors, but the limit is %d (ulimit -Hn): at most %d connections; raise the hard limit (ulimit -Hn, LimitNOFILE= for a service, or the container runtime's nofile ulimit)",
		c.Connections, need, limit, allowed)
}

// CheckFiles tells, before anything is printed or dialed, whether a run
// of cfg over d fits the process's file descriptor limit, which Run
// refuses it over, and how many connections would.
func CheckFiles(cfg Config, d protocol.Dialer) error {
	_, loop, err := chooseDriver(cfg, d)
	if err != nil {
		return nil // Run says what is wrong with the driver
	}
	return checkFileLimit(cfg.Config, cfg.Pacer != nil && !loop, fileLimit())
}
