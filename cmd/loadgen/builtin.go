package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/store"
)

// builtinFlags are what the built-in sweeps (size, lab) share with every
// sweep: where the results go, the ladder, how long each step runs, and the
// CI checks.
type builtinFlags struct {
	out      string
	resume   bool
	ladder   string
	duration time.Duration
	warmup   time.Duration
	repeats  int
	quiet    bool
	wide     bool
	check    checkFlags
	file     string // -f: an options file
	dryRun   bool
	labels   results.Labels
}

// register adds the flags, with the command's defaults; name prefixes the
// default results directory (name-YYYYMMDD-HHMMSS).
func (b *builtinFlags) register(fl *pflag.FlagSet, name, ladder string, duration, warmup time.Duration) {
	fl.StringVarP(&b.out, "out", "o", "", store.OutHelp(name))
	fl.BoolVar(&b.resume, "resume", false, "continue the run in -o, skipping complete steps")
	fl.StringVar(&b.ladder, "ladder", ladder, "connection/thread ladder: cNtM rungs, a doubling range (c1t1..c64t64) or a list (c64t2,c256t4)")
	durationVarP(fl, &b.duration, "duration", "d", duration, "measured duration of each step (10s, 1m30s, or plain seconds)")
	durationVarP(fl, &b.warmup, "warmup", "", warmup, "warm-up before each step's measured window")
	countVarP(fl, &b.repeats, "repeats", "", 1, "repeats of every step")
	fl.BoolVarP(&b.quiet, "quiet", "q", false, "no progress output")
	fl.StringVarP(&b.file, "file", "f", "", "an options file, e.g. "+name+".yaml: YAML whose keys are these long flags (the command line wins)")
	fl.BoolVar(&b.dryRun, "dry-run", false, "check everything and print the plan, step by step, without building or sending anything")
	fl.BoolVar(&b.wide, "wide", false, wideUsage)
	b.check.registerSweep(fl)
	labelFlag(fl, &b.labels)
}

// applyFile sets from -f the flags the command line did not.
func (b *builtinFlags) applyFile(fl *pflag.FlagSet) error {
	if b.file == "" {
		return nil
	}
	return applyFlagFile(fl, b.file, "file")
}

// parse checks the flags, fills the default results directory and returns
// the ladder.
func (b *builtinFlags) parse(name string) (sweep.Ladder, error) {
	if err := b.check.parse(); err != nil {
		return nil, err
	}
	ladder, err := sweep.ParseLadder(b.ladder)
	if err != nil {
		return nil, fmt.Errorf("--ladder: %w", err)
	}
	for _, err := range []error{sweep.CheckDuration("--duration", b.duration), sweep.CheckWarmup("--warmup", b.warmup), sweep.CheckRepeats("--repeats", b.repeats)} {
		if err != nil {
			return nil, err
		}
	}
	if b.out, err = store.OutDir(b.out, name, b.resume, "run", time.Now()); err != nil {
		return nil, err // before anything starts
	}
	return ladder, nil
}

// spec is a closed-loop sweep of these flags, paths to come.
func (b *builtinFlags) spec(ladder sweep.Ladder, protocol string, payload int) *sweep.Spec {
	return &sweep.Spec{
		Ladder: ladder, Payloads: sweep.Payloads{payload}, Protocol: protocol,
		Duration: sweep.Duration(b.duration), Warmup: sweep.Duration(b.warmup), Repeats: b.repeats, Rates: sweep.Rates{0},
	}
}

// job runs spec into dir with these flags; resumeCmd continues it
// (sweep.ResumeCommand).
func (b *builtinFlags) job(spec *sweep.Spec, dir, resumeCmd string) sweepJob {
	return sweepJob{spec: spec, out: dir, resume: b.resume, quiet: b.quiet, check: &b.check, resumeCmd: resumeCmd, dryRun: b.dryRun, wide: b.wide, labels: b.labels}
}
