package lab

import (
	"fmt"
	"os"
	"path/filepath"

	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/store"
)

// A lab's results directory (loadgen lab's -o) holds one sweep per
// protocol, each in a directory named for it.

// SweepDir is where the lab in out keeps protocol's sweep.
func SweepDir(out, protocol string) string { return filepath.Join(out, protocol) }

// CheckResume is the refusal of a resume (--resume) of the lab in out
// when out holds no sweep of any of the protocols, or nil: there is no
// lab there to continue.
func CheckResume(out string, protocols []string) error {
	for _, p := range protocols {
		if _, err := os.Stat(filepath.Join(SweepDir(out, p), store.ManifestFile)); err == nil {
			return nil
		}
	}
	first := ""
	if len(protocols) > 0 {
		first = protocols[0]
	}
	return fmt.Errorf("--resume: %s holds no lab (no %s/%s): drop --resume to start one there", out, first, store.ManifestFile)
}

// Sweeps is what a lab's sweeps came to, one per protocol.
type Sweeps struct {
	Dirs   []string        // each sweep's directory, in the order they ran
	Steps  []*results.Step // every sweep's steps
	Failed []string        // each failed step, as "PROTOCOL STEP" (compare.FailedSteps)
	codes  []compare.Exit  // the statuses of the sweeps that ended with one the lab goes on after
}

// RunSweeps runs the lab's sweep of each protocol in turn, through
// sweep in SweepDir(out, protocol), and reads back each one's steps.
// status tells what a sweep's error comes to as an exit status (ok false:
// the error carries none). A sweep that ends with a status that does not
// stop a command made of parts (a failed step, an assertion or baseline
// that did not hold: compare.Exit.Stops) fails the lab once the other
// protocols ran (Exit); any other error (Ctrl-C, a usage error, an error
// with no status) ends the lab there, and RunSweeps returns it as it is,
// with what ran so far.
func RunSweeps(out string, protocols []string, sweep func(protocol, dir string) error, status func(error) (code compare.Exit, ok bool)) (*Sweeps, error) {
	s := &Sweeps{}
	for _, proto := range protocols {
		dir := SweepDir(out, proto)
		err := sweep(proto, dir)
		s.Dirs = append(s.Dirs, dir)
		if _, steps, rerr := store.ReadSweep(dir); rerr == nil {
			for _, id := range compare.FailedSteps(steps) {
				s.Failed = append(s.Failed, proto+" "+id)
			}
			s.Steps = append(s.Steps, steps...)
		}
		if err != nil {
			code, ok := status(err)
			if !ok || code.Stops() {
				return s, err
			}
			s.codes = append(s.codes, code)
		}
	}
	return s, nil
}

// Exit is the lab's exit status, its steps' and its sweeps' statuses
// folded (compare.FoldSteps: 1 for a failed step, 108 for an aborted one,
// 99 for a check that did not hold, 98 for one left undecided), and the
// line naming its failed steps ("" when none failed).
func (s *Sweeps) Exit() (compare.Exit, string) {
	return compare.FoldSteps(s.Steps, s.Failed, len(s.Steps), s.codes...)
}
