package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"loadgen/results"
)

// FindMaxFileName is the summary of a find-max search in its results
// directory.
const FindMaxFileName = "findmax.json"

// FindMaxFile is findmax.json (docs/schema/findmax.schema.json): every
// search of one find-max sweep, in the result format of schema 3 (every
// figure a number with its unit in its key: rates in requests/s, _rps;
// latencies in microseconds, _us).
type FindMaxFile struct {
	Schema int    `json:"schema"`
	Tool   string `json:"tool"`          // "loadgen"
	SLO    string `json:"slo,omitempty"` // as --slo said it
	// Interrupted is set when the sweep was stopped (Ctrl-C) before its
	// searches ended.
	Interrupted bool  `json:"interrupted,omitempty"`
	Searches    []Max `json:"searches"`
}

// Micros is a duration written, as the result format writes latencies, as
// a number of microseconds exact to the nanosecond.
type Micros results.Duration

func (d Micros) MarshalJSON() ([]byte, error) {
	return []byte(results.FormatMicros(results.Duration(d))), nil
}

func (d *Micros) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("want a number of microseconds: %w", err)
	}
	*d = Micros(math.Round(f * 1e3))
	return nil
}

// D is d as a time.Duration.
func (d Micros) D() time.Duration { return time.Duration(d) }

// Probe is one run of the search for the maximum rate.
type Probe struct {
	Rate float64 `json:"rate_rps"`
	// Attempt numbers the probes of one rate over the whole search, from 1:
	// a miss is probed again, and the rate reported is confirmed.
	Attempt int    `json:"attempt"`
	OK      bool   `json:"ok"`
	Why     string `json:"why,omitempty"`
	ID      string `json:"id"` // its step in the results directory
	P99     Micros `json:"p99_us,omitempty"`
	// Generator and Machine are the CPU of loadgen itself and of the
	// whole machine (every process, /proc/stat) over the probe's measured
	// window; saturated (G, M), the probe measured contention for CPU,
	// other processes' included, not the path alone.
	Generator *GeneratorState      `json:"generator,omitempty"`
	Machine   *results.MachineCost `json:"machine,omitempty"`
}

// GeneratorState is how busy loadgen itself was during a probe.
type GeneratorState struct {
	Utilization float64 `json:"utilization"` // of the CPUs it was allowed
	Saturated   bool    `json:"saturated"`   // > results.SaturatedAbove
}

// Flags are the probe's saturation flags, as the sweep's tables print
// them: "G" (the generator), "M" (the machine), "GM" or "".
func (p Probe) Flags() string {
	f := ""
	if p.Generator != nil && p.Generator.Saturated {
		f += "G"
	}
	if p.Machine != nil && p.Machine.Saturated {
		f += "M"
	}
	return f
}

// Verdict is what the probes at one rate concluded: a rate holds when two
// of at most three probes held, and fails on two misses. While the search
// explores, one probe that held is believed for now (the verdict is
// provisional: Passed 1); the rate the search reports is confirmed.
type Verdict struct {
	Rate   float64 `json:"rate_rps"`
	OK     bool    `json:"ok"`
	Probes int     `json:"probes"` // how many probes the verdict rests on: at most 3
	Passed int     `json:"held"`   // how many of them held the SLO
	// Judged counts the verdicts reached at this rate over the search: the
	// lowest failing rate is judged again once the bracket is closed.
	Judged int    `json:"judged"`
	Why    string `json:"why,omitempty"` // why the last probe that missed missed
}

// Confirmed tells whether the verdict holds on two probes that held.
func (v *Verdict) Confirmed() bool { return v != nil && v.OK && v.Passed >= agree }

// Max is the highest open-loop rate that held the SLO on one path, rung and
// payload, the bracket the search ended with, and how it got there.
type Max struct {
	Path    string `json:"path"`
	Rung    string `json:"rung"`
	Payload int    `json:"payload"` // bytes
	// Rate is the highest rate whose verdict held and was confirmed (two
	// of at most three probes held); 0: none was.
	Rate float64 `json:"max_rps"`
	P99  Micros  `json:"p99_at_max_us,omitempty"` // the highest p99 of the probes at Rate that held
	// Pass and Fail bracket the maximum: the highest rate that held and
	// the lowest that failed (nil: none held, or none failed up to the
	// ceiling of 2,000,000/s). Pass is confirmed unless the search was
	// stopped first.
	Pass   *Verdict `json:"highest_held,omitempty"`
	Fail   *Verdict `json:"lowest_failed,omitempty"`
	Probes []Probe  `json:"probes"`
	// Failed is why a probe had no run at all (the path cannot be
	// reached): the search of this path stopped there.
	Failed string `json:"failed,omitempty"`
	// Machine is the machine's state over the search's probes.
	Machine *MachineState `json:"machine,omitempty"`
	// Contended lists the probes during which the generator (G) or the
	// whole machine (M) was saturated; with any, MeasuresContention: the
	// search's verdicts may measure contention for CPU, not the path.
	Contended          []Contended `json:"contended_probes,omitempty"`
	MeasuresContention bool        `json:"measures_contention"`
}

// MachineState is the CPU of the whole machine (every process,
// /proc/stat) and of loadgen over a search's probes, each over its
// measured window.
type MachineState struct {
	CPUs     int `json:"cpus_online,omitempty"`
	Measured int `json:"probes_measured"` // probes with the machine's CPU measured
	// The machine's utilization (busy cores / CPUs) over the measured
	// probes: the least, the median and the most.
	UtilizationMin    float64 `json:"utilization_min"`
	UtilizationMedian float64 `json:"utilization_median"`
	UtilizationMax    float64 `json:"utilization_max"`
	// How many probes saturated the machine (M) and the generator (G).
	MachineSaturated   int `json:"machine_saturated_probes"`
	GeneratorSaturated int `json:"generator_saturated_probes"`
}

// Contended is a probe during which the generator (G) or the machine (M)
// was saturated.
type Contended struct {
	ID      string  `json:"id"`
	Rate    float64 `json:"rate_rps"`
	Attempt int     `json:"attempt"`
	Flags   string  `json:"flags"` // G, M or GM
}

// summarizeMachine sets m.Machine and m.Contended from m.Probes.
func (m *Max) summarizeMachine() {
	var ms MachineState
	var utils []float64
	seen := false
	m.Contended = nil
	for _, p := range m.Probes {
		if p.Generator != nil || p.Machine != nil {
			seen = true
		}
		if p.Machine != nil {
			ms.CPUs = p.Machine.CPUs
			utils = append(utils, p.Machine.Utilization)
			if p.Machine.Saturated {
				ms.MachineSaturated++
			}
		}
		if p.Generator != nil && p.Generator.Saturated {
			ms.GeneratorSaturated++
		}
		if f := p.Flags(); f != "" {
			m.Contended = append(m.Contended, Contended{ID: p.ID, Rate: p.Rate, Attempt: p.Attempt, Flags: f})
		}
	}
	m.MeasuresContention = len(m.Contended) > 0
	if !seen {
		m.Machine = nil
		return
	}
	if ms.Measured = len(utils); ms.Measured > 0 {
		slices.Sort(utils)
		ms.UtilizationMin, ms.UtilizationMax = utils[0], utils[len(utils)-1]
		ms.UtilizationMedian = utils[len(utils)/2]
		if len(utils)%2 == 0 {
			ms.UtilizationMedian = (utils[len(utils)/2-1] + utils[len(utils)/2]) / 2
		}
	}
	m.Machine = &ms
}

// ReadFindMax reads a findmax.json: this format, or the one loadgen wrote
// before schema 3 (an array of searches, with a latency as "1.2ms"), whose
// Schema reads as 2.
func ReadFindMax(path string) (*FindMaxFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		var old []legacyMax
		if err := json.Unmarshal(t, &old); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		f := &FindMaxFile{Schema: 2, Tool: "loadgen"}
		for _, o := range old {
			f.Searches = append(f.Searches, o.upgrade())
		}
		return f, nil
	}
	var f FindMaxFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if f.Schema > results.SchemaVersion {
		return nil, fmt.Errorf("%s: schema %d is newer than this loadgen understands: upgrade loadgen", path, f.Schema)
	}
	return &f, nil
}

// legacyMax is a search as findmax.json held it before schema 3. Its
// verdicts believed one probe that held: its maximum may rest on one held
// probe of three.
type legacyMax struct {
	Path      string         `json:"path"`
	Rung      string         `json:"rung"`
	Payload   int            `json:"payload"`
	Rate      float64        `json:"max_rate"`
	P99       string         `json:"p99_at_max"`
	Pass      *legacyVerdict `json:"highest_passing"`
	Fail      *legacyVerdict `json:"lowest_failing"`
	Probes    []legacyProbe  `json:"probes"`
	Failed    string         `json:"failed"`
	Saturated int            `json:"machine_saturated_probes"`
}

type legacyVerdict struct {
	Rate   float64 `json:"rate"`
	OK     bool    `json:"ok"`
	Probes int     `json:"probes"`
	Passed int     `json:"passed"`
	Why    string  `json:"why"`
}

type legacyProbe struct {
	Rate    float64 `json:"rate"`
	Attempt int     `json:"attempt"`
	OK      bool    `json:"ok"`
	Why     string  `json:"why"`
	ID      string  `json:"id"`
}

func (o legacyMax) upgrade() Max {
	m := Max{Path: o.Path, Rung: o.Rung, Payload: o.Payload, Rate: o.Rate, Failed: o.Failed}
	if d, err := time.ParseDuration(o.P99); err == nil {
		m.P99 = Micros(d)
	}
	verdict := func(v *legacyVerdict) *Verdict {
		if v == nil {
			return nil
		}
		return &Verdict{Rate: v.Rate, OK: v.OK, Probes: v.Probes, Passed: v.Passed, Judged: 1, Why: v.Why}
	}
	m.Pass, m.Fail = verdict(o.Pass), verdict(o.Fail)
	for _, p := range o.Probes {
		m.Probes = append(m.Probes, Probe{Rate: p.Rate, Attempt: p.Attempt, OK: p.OK, Why: p.Why, ID: p.ID})
	}
	if o.Saturated > 0 { // which probes, it did not say
		m.Machine = &MachineState{MachineSaturated: o.Saturated}
		m.MeasuresContention = true
	}
	return m
}
