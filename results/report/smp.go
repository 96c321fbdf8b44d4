package report

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"loadgen/results"
)

// SMPVersion is the Service Mesh Performance specification release whose
// PerformanceTestResult message SMP follows.
const SMPVersion = "v0.6.1"

// smpResult is SMP's PerformanceTestResult (protos/service_mesh_performance.proto)
// in the proto3 JSON mapping with the proto field names, which every
// protobuf JSON parser accepts and SMP's own examples use.
type smpResult struct {
	SMPVersion   string            `json:"smp_version"`
	ID           string            `json:"id"`
	Labels       map[string]string `json:"labels,omitempty"`
	StartTime    string            `json:"start_time"` // RFC 3339, UTC
	EndTime      string            `json:"end_time"`
	LatenciesMs  smpLatency        `json:"latencies_ms"`
	ActualQPS    float64           `json:"actual_qps"`
	DetailsURI   string            `json:"details_uri,omitempty"`
	TestID       string            `json:"test_id,omitempty"`
	MeshConfigID string            `json:"mesh_config_id,omitempty"`
	EnvID        string            `json:"env_id,omitempty"`
}

// smpLatency is PerformanceTestResult.Latency, in milliseconds.
type smpLatency struct {
	Min     float64 `json:"min"`
	Average float64 `json:"average"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// SMP writes every run as a Service Mesh Performance result. What the
// message has no field for (the path, ladder step, payload, errors, tail
// percentiles, and the CPU and memory of the watched processes, which SMP
// models only as nested message types) goes into its string labels,
// named loadgen.* (a watched process set as loadgen.ROLE.cpu_mcores …),
// beside the run's own --label pairs, keys as given;
// CPU in millicores and memory in MB (10⁶ bytes), as SMP counts them. One run is written as one object, several as an array.
func SMP(w io.Writer, sweeps []*Sweep) error {
	var out []*smpResult
	for _, s := range sweeps {
		test := ""
		if !s.Single() {
			test = s.Name
		}
		for _, st := range s.Steps {
			if st.Run == nil {
				continue
			}
			out = append(out, smpRun(st, test))
		}
	}
	return writeJSON(w, out)
}

func smpRun(st *results.Step, test string) *smpResult {
	run := st.Run
	sum := run.Summary
	l := sum.Latency
	msf := func(d results.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	r := &smpResult{
		SMPVersion: SMPVersion,
		ID:         st.ID,
		StartTime:  run.Start.UTC().Format(time.RFC3339Nano),
		EndTime:    run.End.UTC().Format(time.RFC3339Nano),
		LatenciesMs: smpLatency{Min: msf(l.Min), Average: msf(l.Mean), P50: msf(l.P50), P90: msf(l.P90),
			P99: msf(l.P99), Max: msf(l.Max)},
		ActualQPS: sum.RPS,
		TestID:    test,
		EnvID:     run.Env.Hostname,
	}
	lb := map[string]string{}
	for k, v := range run.Labels { // the user's --label pairs, as given
		lb[k] = v
	}
	for k, v := range map[string]string{
		"loadgen.path":                 st.Path,
		"loadgen.rung":                 st.Rung,
		"loadgen.connections":          itoa(st.Connections),
		"loadgen.threads":              itoa(st.Threads),
		"loadgen.payload":              itoa(st.Payload),
		"loadgen.protocol":             run.Config.Protocol,
		"loadgen.target":               run.Config.Target,
		"loadgen.requests":             i64(sum.Requests),
		"loadgen.errors":               i64(sum.Errors.Total()),
		"loadgen.timeouts":             i64(sum.Errors.Timeout),
		"loadgen.p99_9_ms":             fnum(msf(l.P999)),
		"loadgen.p99_99_ms":            fnum(msf(l.P9999)),
		"loadgen.generator_cpu_mcores": strconv.Itoa(int(GeneratorCores(run)*1000 + 0.5)),
		"loadgen.version":              run.Env.Version,
	} {
		lb[k] = v // loadgen's own keys over a user's of the same name
	}
	if st.Baseline {
		lb["loadgen.baseline"] = "true"
	}
	if run.Config.OpenLoop() {
		lb["loadgen.rate"] = fnum(run.Config.Rate)
	}
	if st.Repeat > 0 {
		lb["loadgen.repeat"] = itoa(st.Repeat)
	}
	roles := map[string]int{}
	for _, p := range st.Watched {
		roles[p.Role]++
	}
	for _, p := range st.Watched {
		pre := "loadgen." + p.Role + "."
		if roles[p.Role] > 1 {
			pre = fmt.Sprintf("loadgen.%s.%s.", p.Role, p.Name)
		}
		lb[pre+"name"] = p.Name
		lb[pre+"cpu_mcores"] = strconv.Itoa(int(p.CPUMean*1000 + 0.5))
		lb[pre+"cpu_mcores_max"] = strconv.Itoa(int(p.CPUMax*1000 + 0.5))
		lb[pre+"mem_mb"] = strconv.FormatFloat(float64(p.MemMean)/1e6, 'f', 1, 64)
		lb[pre+"mem_mb_max"] = strconv.FormatFloat(float64(p.MemMax)/1e6, 'f', 1, 64)
	}
	r.Labels = lb
	return r
}
