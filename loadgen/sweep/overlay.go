package sweep

import (
	"fmt"
	"time"

	"loadgen/loadgen/pace"
)

// FlagValues are the values of loadgen sweep's flags that set a plan's
// keys, as the command line holds them: a flag not given holds its
// default. Overlay decides which of them win.
type FlagValues struct {
	Protocol, Call, Data, Protoset string
	Duration, Warmup, Timeout      time.Duration
	TrimStart, TrimEnd             time.Duration // --trim-start, --trim-end
	Repeats                        int
	Paths                          []string // --path NAME=URL, in order
	Watches                        []string // --watch NAME=WATCH, in order
	TargetWatch                    string   // --target-watch
	Ladder, Rates                  string   // --ladder, -R
	Arrival, Jitter                string   // --arrival, --jitter
	FindMax                        bool     // --find-max: a search of open-loop rates
	Endpoint, Payloads             string
}

// Overlay sets on base (a sweep file's or a resume's saved plan; nil: a
// sweep of the flags alone) the keys the flags give, changed saying which
// flag was given on the command line (by its long name). Without a base
// every flag sets its key, its default when not given; over a base only
// the flags given do, as a sweep file's keys give way to them. Some keys
// take a flag only when given, with or without a base: --trim-start and
// --trim-end (unset: the file's, or the spec's own default), --arrival,
// --jitter and --endpoint (a default fits only some protocols). --payloads'
// default is a plan's only without a base and without --call (a gRPC
// method's message is its payload). --path and --watch always apply, the
// paths first, so that a watch may name a path the command line gives.
//
// An error names the flag, never a line of a file the user did not
// write; a zero the value would take for "default" is refused here.
// base is changed in place and returned.
func Overlay(base *Spec, v FlagValues, changed func(name string) bool) (*Spec, error) {
	s := base
	if s == nil {
		s = &Spec{}
	}
	given := func(name string) bool { return base == nil || changed(name) }
	if given("repeats") {
		if err := CheckRepeats("--repeats", v.Repeats); err != nil {
			return nil, err
		}
	}
	if given("duration") {
		if err := CheckDuration("--duration", v.Duration); err != nil {
			return nil, err
		}
	}
	if given("protocol") {
		s.SetProtocol(v.Protocol)
	}
	if given("duration") {
		s.Duration = Duration(v.Duration)
	}
	if given("warmup") {
		s.Warmup = Duration(v.Warmup)
	}
	if given("timeout") {
		s.Timeout = Duration(v.Timeout)
	}
	if given("repeats") {
		s.Repeats = v.Repeats
	}
	if changed("trim-start") { // unset: the file's, or none
		d := Duration(v.TrimStart)
		s.TrimStart = &d
	}
	if changed("trim-end") { // unset: the file's, or the default
		d := Duration(v.TrimEnd)
		s.TrimEnd = &d
	}
	if given("call") {
		s.SetCall(v.Call)
	}
	if given("data") {
		s.Data = v.Data
	}
	if given("protoset") {
		s.Protoset = v.Protoset
	}
	watch := map[string]*Watch{}
	var watched []string
	for _, w := range v.Watches {
		name, ws, err := ParseWatchFlag(w)
		if err != nil {
			return nil, fmt.Errorf("--watch %w", err)
		}
		watch[name] = ws
		watched = append(watched, name)
	}
	for _, p := range v.Paths {
		path, err := ParsePathFlag(p)
		if err != nil {
			return nil, fmt.Errorf("--path %w", err)
		}
		s.SetPath(path) // the command line's address for the file's path
	}
	for _, name := range watched {
		if err := s.SetWatch(name, watch[name]); err != nil {
			return nil, fmt.Errorf("--watch %w", err)
		}
	}
	if given("target-watch") && v.TargetWatch != "" {
		w, err := ParseWatch(v.TargetWatch)
		if err != nil {
			return nil, fmt.Errorf("--target-watch: %w", err)
		}
		s.Target = w
	}
	if given("ladder") {
		ladder, err := ParseLadder(v.Ladder)
		if err != nil {
			return nil, fmt.Errorf("--ladder: %w", err)
		}
		s.Ladder = ladder
	}
	if given("rate") {
		rates, err := ParseRates(v.Rates)
		if err != nil {
			return nil, fmt.Errorf("-R: %w", err)
		}
		s.Rates = rates
	}
	if err := overlayArrival(s, v, changed); err != nil {
		return nil, err
	}
	// Defaults that fit only some protocols are left to the spec's own.
	if changed("endpoint") {
		s.Endpoint = v.Endpoint
	}
	if changed("payloads") || (base == nil && v.Call == "") {
		payloads, err := ParsePayloads(v.Payloads)
		if err != nil {
			return nil, fmt.Errorf("--payloads: %w", err)
		}
		s.Payloads = payloads
	}
	return s, nil
}

// overlayArrival sets the arrival process and the jitter the command line
// gives, checked, and checks them against the rates (CheckArrival).
func overlayArrival(s *Spec, v FlagValues, changed func(string) bool) error {
	var jitter float64
	if changed("arrival") {
		if err := pace.CheckProcess(v.Arrival); err != nil {
			return fmt.Errorf("--%w", err)
		}
	}
	if changed("jitter") {
		j, err := pace.ParseJitter(v.Jitter)
		if err != nil {
			return fmt.Errorf("--jitter: %w", err)
		}
		jitter = j
	}
	if changed("arrival") {
		s.Arrival = v.Arrival
	}
	if changed("jitter") {
		s.JitterPct = jitter * 100
	}
	return s.CheckArrival(v.FindMax)
}
