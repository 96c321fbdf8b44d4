package live

import (
	"loadgen/results"
	"loadgen/results/report"
	"net/url"
	"time"
)

// Lat is a latency: microseconds, and as loadgen's tables print it.
type Lat struct {
	US   float64 `json:"us"`
	Text string  `json:"text"`
}

func lat(d time.Duration) Lat {
	if d <= 0 {
		return Lat{Text: "-"}
	}
	return Lat{US: float64(d.Nanoseconds()) / 1e3, Text: report.Latency(results.Duration(d))}
}

// Figures are a run's numbers: live, the measured window so far and its
// last interval; at the end, the result's summary.
type Figures struct {
	Requests int64   `json:"requests"` // answered (any status)
	Errors   int64   `json:"errors"`   // failed, every class (error statuses too)
	RPS      float64 `json:"rps"`      // answered per second: the last interval's live, the window's at the end
	Asked    float64 `json:"asked_rps,omitempty"`
	Sent     float64 `json:"sent_rps,omitempty"` // open loop, at the end: sent per second of the window
	P50      Lat     `json:"p50"`
	P99      Lat     `json:"p99"`
	P999     Lat     `json:"p99_9"`
	// The generator's CPU in cores and as a share of the CPUs it may use,
	// and the machine's share of its CPUs busy; -1 when not known.
	GenCores    float64 `json:"gen_cores"`
	GenUtil     float64 `json:"gen_util"`
	MachineUtil float64 `json:"machine_util"`
	Flags       string  `json:"flags"` // G, M: saturated, as the sweep's tables say
}

// StepRow is a finished step in the page's table.
type StepRow struct {
	Index       int      `json:"index"`
	ID          string   `json:"id"`
	Path        string   `json:"path"`
	Rung        string   `json:"rung"`
	Payload     string   `json:"payload"`
	Rate        float64  `json:"rate,omitempty"` // asked; 0 closed loop
	Repeat      int      `json:"repeat"`
	Requests    int64    `json:"requests"`
	RPS         float64  `json:"rps"`
	P50         Lat      `json:"p50"`
	P99         Lat      `json:"p99"`
	Errors      int64    `json:"errors"`
	Flags       string   `json:"flags"`
	ProxyCPU    *float64 `json:"proxy_cpu,omitempty"` // cores, mean over the step: where a proxy was watched
	ProxyNote   string   `json:"proxy_note,omitempty"`
	Failed      string   `json:"failed,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
}

// Point is a record over time in the snapshot.
type Point struct {
	T        float64  `json:"t"` // start, seconds from the measured window's start (negative in the warm-up)
	D        float64  `json:"d"` // seconds
	Warmup   bool     `json:"warmup,omitempty"`
	Requests int64    `json:"requests"`
	Errors   int64    `json:"errors"`
	RPS      float64  `json:"rps"`
	Asked    float64  `json:"asked,omitempty"`
	P50      float64  `json:"p50_us,omitempty"`
	P99      float64  `json:"p99_us,omitempty"`
	P999     float64  `json:"p99_9_us,omitempty"`
	Gen      *float64 `json:"gen_util,omitempty"`
	Machine  *float64 `json:"machine_util,omitempty"`
	Outage   bool     `json:"outage,omitempty"`
}

// RunView is the run on the page.
type RunView struct {
	Label    string   `json:"label"`
	Step     string   `json:"step,omitempty"`
	State    string   `json:"state"` // starting, running, done, interrupted, aborted, failed, stopped
	Elapsed  float64  `json:"elapsed_s"`
	Planned  float64  `json:"planned_s"`
	Warmup   float64  `json:"warmup_s"`
	OpenLoop bool     `json:"open_loop"`
	CPUs     float64  `json:"cpus_allowed"`
	Live     Figures  `json:"live"`
	Final    *Figures `json:"final,omitempty"`
	PerPoint float64  `json:"point_s"` // seconds a point holds live (1 but for long runs)
	Timeline []Point  `json:"timeline"`
	Notes    []string `json:"notes,omitempty"`
}

// Flag is a flag's letter with the words the reports explain it in.
type Flag struct {
	Letter  string `json:"letter"`
	Meaning string `json:"meaning"`
}

// Snapshot is the page's data: the JSON it polls.
type Snapshot struct {
	Kind    string    `json:"kind"`
	Title   string    `json:"title"`
	Version uint64    `json:"version"`
	Done    bool      `json:"done"`              // the command's work is over
	Outcome string    `json:"outcome,omitempty"` // how it ended
	Note    string    `json:"note,omitempty"`
	Uptime  float64   `json:"uptime_s"` // since the command started
	Legend  []Flag    `json:"legend"`
	Run     *RunView  `json:"run,omitempty"`
	Planned int       `json:"planned_steps,omitempty"`
	Steps   []StepRow `json:"steps"`
	Dropped int       `json:"dropped_steps,omitempty"`
	Events  []string  `json:"events"`
}

var legend = func() []Flag {
	var out []Flag
	for _, l := range []string{"F", "I", "G", "M"} {
		out = append(out, Flag{l, report.FlagMeaning(l)})
	}
	return out
}()

// Snapshot copies the State.
func (s *State) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{Kind: s.kind, Title: s.title, Version: s.version, Done: s.done, Outcome: s.outcome, Note: s.note,
		Uptime: time.Since(s.started).Seconds(), Legend: legend, Planned: s.planned, Dropped: s.dropped,
		Steps: append([]StepRow{}, s.steps...), Events: make([]string, 0, len(s.events))}
	if len(s.events) == MaxEvents {
		snap.Events = append(snap.Events, s.events[s.eventsAt:]...)
		snap.Events = append(snap.Events, s.events[:s.eventsAt]...)
	} else {
		snap.Events = append(snap.Events, s.events...)
	}
	if r := s.run; r != nil {
		v := &RunView{Label: r.info.Label, Step: r.info.Step, State: r.state, Elapsed: r.elapsed.Seconds(),
			Planned: r.info.Planned.Seconds(), Warmup: r.info.Warmup.Seconds(), OpenLoop: r.info.Asked != nil || r.paced,
			CPUs: r.info.CPUs, Live: r.live, PerPoint: float64(r.k), Notes: append([]string{}, r.notes...),
			Timeline: make([]Point, len(r.points), len(r.points)+1)}
		if r.final != nil {
			f := *r.final
			v.Final = &f
		}
		for i, p := range r.points {
			v.Timeline[i] = p.view()
		}
		if r.accN > 0 {
			v.Timeline = append(v.Timeline, r.acc.view()) // the point being gathered, so far
		}
		snap.Run = v
	}
	return snap
}

func (p point) view() Point {
	iv := p.iv
	out := Point{T: iv.Start.D().Seconds(), D: iv.Duration.D().Seconds(), Warmup: iv.Warmup, Requests: iv.Requests,
		Errors: iv.Errors, RPS: iv.RPS, Asked: p.asked, Outage: iv.Outage,
		P50: us(iv.P50), P99: us(iv.P99), P999: us(iv.P999)}
	if p.gen >= 0 {
		g := p.gen
		out.Gen = &g
	}
	if p.machine >= 0 {
		m := p.machine
		out.Machine = &m
	}
	return out
}

func us(d results.Duration) float64 { return float64(d.D().Nanoseconds()) / 1e3 }

// Target is a target URL fit to show: without a password (or any user
// information) it may carry.
func Target(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.User == nil {
		return target
	}
	u.User = nil
	return u.String()
}
