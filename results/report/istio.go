package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"loadgen/results"
)

// IstioColumns are the columns of istio/tools' perf benchmark CSV, in its
// order: the --csv list its job passes to runner/fortio.py
// (perf/benchmark/run_benchmark_job.sh), which its graph_plotter.py and
// the Istio performance pages read. Latencies are in µs, CPU in
// millicores, memory in MiB, ActualDuration in whole seconds.
var IstioColumns = []string{
	"StartTime", "ActualDuration", "Labels", "NumThreads", "ActualQPS", "p50", "p90", "p99", "p999",
	"cpu_mili_avg_istio_proxy_fortioclient", "cpu_mili_avg_istio_proxy_fortioserver",
	"cpu_mili_avg_istio_proxy_istio-ingressgateway", "mem_Mi_avg_istio_proxy_fortioclient",
	"mem_Mi_avg_istio_proxy_fortioserver", "mem_Mi_avg_istio_proxy_istio-ingressgateway",
}

// istioExtra are the other keys fortio.py's convert_data makes of a run,
// after IstioColumns: a user's own --csv list may name them.
var istioExtra = []string{"RequestedQPS", "RunType", "min", "max", "p75", "errorPercent", "Payload"}

// IstioModes are istio/tools' sidecar modes (runner.py), the last field
// of its labels, and loadgen's for the paths it has no mode for.
var IstioModes = []string{"no_istio", "serveronly", "clientonly", "both", "ingress", "ambient", "unknown"}

// istioMissing is what fortio.py writes for a key a run lacks.
const istioMissing = "-"

// IstioCSV writes one row per step that ran, as istio/tools' fortio.py
// writes its CSV: IstioColumns, then istioExtra. Each run is labelled as
// runner.py labels its runs, RUNID_qps_Q_c_C_SIZE_TELEMETRY_MODE: RUNID
// eight hex digits per sweep, Q the asked rate (0: closed loop, fortio's
// -qps 0), C the connections, SIZE the payload, TELEMETRY the path's name
// (what loadgen compares), MODE the proxies on the path (IstioModes).
// The proxies' columns sum every watched proxy of a side: the workers'
// sidecars (fortioclient), the target's (fortioserver), an ingress or a
// gateway (istio-ingressgateway); "-" where the path has none or it was
// not measured.
func IstioCSV(w io.Writer, sweeps []*Sweep) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(append([]string{}, IstioColumns...), istioExtra...)); err != nil {
		return err
	}
	for _, s := range sweeps {
		modes := sidecarPlacements(s)
		id := istioRunID(s)
		for _, st := range s.Steps {
			if st.Run == nil {
				continue
			}
			if err := cw.Write(istioRow(id, modes, st)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func istioRow(id string, placements map[string]string, st *results.Step) []string {
	run := st.Run
	c, sum := run.Config, run.Summary
	us := func(d results.Duration) string { return strconv.FormatInt(time.Duration(d).Microseconds(), 10) }
	qps := "0"
	requested := "99999999" // fortio.py's figure for RequestedQPS "max"
	if st.Rate > 0 {
		qps = strconv.FormatInt(int64(math.Round(st.Rate)), 10)
		requested = qps
	}
	size := st.Payload
	if size == 0 {
		size = c.Size
	}
	cpu, mem := istioProxyCost(st)
	row := map[string]string{
		"StartTime":      run.Start.UTC().Format(time.RFC3339Nano),
		"ActualDuration": strconv.FormatInt(int64(time.Duration(sum.Duration)/time.Second), 10),
		"Labels": fmt.Sprintf("%s_qps_%s_c_%d_%d_%s_%s", id, qps, st.Connections, size,
			istioField(st.Path), istioMode(placements[st.Path], st)),
		"NumThreads":   strconv.Itoa(c.Connections * max(1, c.Streams)),
		"ActualQPS":    strconv.FormatInt(int64(math.Round(sum.RPS)), 10),
		"p50":          us(sum.Latency.P50),
		"p75":          us(sum.Latency.P75),
		"p90":          us(sum.Latency.P90),
		"p99":          us(sum.Latency.P99),
		"p999":         us(sum.Latency.P999),
		"min":          us(sum.Latency.Min),
		"max":          us(sum.Latency.Max),
		"RequestedQPS": requested,
		"RunType":      istioRunType(c.Protocol),
	}
	if sum.Requests > 0 {
		row["errorPercent"] = strconv.FormatFloat(100*float64(sum.Errors.Total())/float64(sum.Requests), 'f', -1, 64)
		if row["RunType"] == "HTTP" {
			row["Payload"] = strconv.FormatInt(sum.BytesRead/sum.Requests, 10)
		}
	}
	for side, col := range map[string]string{"client": "fortioclient", "server": "fortioserver", "": "istio-ingressgateway"} {
		if v, ok := cpu[side]; ok {
			row["cpu_mili_avg_istio_proxy_"+col] = strconv.FormatFloat(v*1000, 'f', -1, 64)
			row["mem_Mi_avg_istio_proxy_"+col] = strconv.FormatFloat(mem[side]/(1<<20), 'f', -1, 64)
		}
	}
	out := make([]string, 0, len(IstioColumns)+len(istioExtra))
	for _, k := range append(append([]string{}, IstioColumns...), istioExtra...) {
		v, ok := row[k]
		if !ok {
			v = istioMissing
		}
		out = append(out, v)
	}
	return out
}

// istioProxyCost sums the mean CPU (cores) and memory (bytes) of a step's
// measured proxies per side: client, server, and "" for one between them
// (an ingress, a gateway, a reverse proxy), leaving out a node's or a
// namespace's shared proxies (ztunnel, waypoint), which istio/tools has no
// column for.
func istioProxyCost(st *results.Step) (cpu, mem map[string]float64) {
	cpu, mem = map[string]float64{}, map[string]float64{}
	for _, p := range st.Watched {
		if p.Role != "proxy" || p.NoProxy != "" || p.Unmeasured != "" || p.Samples == 0 || ambientProxy(p) {
			continue
		}
		cpu[p.Side] += p.CPUMean
		mem[p.Side] += float64(p.MemMean)
	}
	return cpu, mem
}

func ambientProxy(p results.ProcessCost) bool { return p.Name == "ztunnel" || p.Name == "waypoint" }

// istioMode is the mode of a step's path in istio/tools' words: a local
// sidecar path's placement (none is no_istio); no_istio for the baseline
// (the direct path, which bypasses any sidecar its pods run); else, from
// the proxies it watched, ingress for one between client and target,
// both, serveronly or clientonly for sidecars, ambient for ztunnel or a
// waypoint; unknown for any other.
func istioMode(placement string, st *results.Step) string {
	switch placement {
	case "none":
		return "no_istio"
	case "serveronly", "clientonly", "both":
		return placement
	}
	if st.Baseline {
		return "no_istio" // the direct path: its pods' proxies are bypassed
	}
	var client, server, between, ambient bool
	for _, p := range st.Watched {
		if p.Role != "proxy" || p.NoProxy != "" {
			continue
		}
		switch {
		case ambientProxy(p):
			ambient = true
		case p.Side == "client":
			client = true
		case p.Side == "server":
			server = true
		default:
			between = true
		}
	}
	switch {
	case between:
		return "ingress"
	case client && server:
		return "both"
	case server:
		return "serveronly"
	case client:
		return "clientonly"
	case ambient:
		return "ambient"
	}
	return "unknown"
}

// sidecarPlacements are the placements of a sweep's local sidecar paths,
// by path name, read from the plan its manifest keeps.
func sidecarPlacements(s *Sweep) map[string]string {
	out := map[string]string{}
	if s.Manifest == nil || len(s.Manifest.Spec) == 0 {
		return out
	}
	var spec struct {
		Paths []struct {
			Name    string `json:"name"`
			Sidecar *struct {
				Placement string `json:"placement"`
			} `json:"sidecar"`
		} `json:"paths"`
	}
	if json.Unmarshal(s.Manifest.Spec, &spec) != nil {
		return out
	}
	for _, p := range spec.Paths {
		if p.Sidecar != nil {
			out[p.Name] = p.Sidecar.Placement
		}
	}
	return out
}

// istioRunID stands for runner.py's run id (the first eight hex digits of
// a UUID per invocation): the same for every step of a sweep.
func istioRunID(s *Sweep) string {
	h := fnv.New32a()
	io.WriteString(h, s.Name)
	if s.Manifest != nil {
		io.WriteString(h, s.Manifest.Created.UTC().Format(time.RFC3339Nano))
	} else if len(s.Steps) > 0 && s.Steps[0].Run != nil {
		io.WriteString(h, s.Steps[0].Run.Start.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// istioField is a path's name as a label's field: no comma, space or
// quote that would break the CSV or the label.
func istioField(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			return r
		}
		return '-'
	}, s)
}

// istioRunType is fortio's RunType, which fortio.py tests for "HTTP".
func istioRunType(protocol string) string {
	switch {
	case strings.HasPrefix(protocol, "grpc"):
		return "GRPC Ping" // as fortio.go writes it
	case strings.HasPrefix(protocol, "tcp"):
		return "TCP"
	}
	return "HTTP"
}
