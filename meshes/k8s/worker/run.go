package worker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"loadgen/meshes/k8s"
	"loadgen/meshes/leftover"
	"loadgen/results"
	"loadgen/results/store"
)

// Config is one worker's command line (`loadgen k8s worker`).
type Config struct {
	Workers     int
	Index       int // JOB_COMPLETION_INDEX
	Connections int // in all, as the Job was told
	Threads     int
	Rate        float64
	StartAt     time.Time
	MaxLate     time.Duration
	// Clock is the reference clock's URL (the API server's /version, from
	// KUBERNETES_SERVICE_HOST/PORT); empty: the offset is not measured.
	Clock   string
	ClockCA string   // CA file of Clock (the service account's)
	RunArgs []string // `loadgen run …` without -c, -t, -R and --json
	// Wire and CoordinatorVersion are the coordinator's wire version and
	// loadgen version; Version is this worker's loadgen version. A Wire
	// other than k8s.WireVersion is refused (CheckWire).
	Wire                        int
	CoordinatorVersion, Version string
}

// DefaultMaxLate is how late a worker may reach the start instant and
// still run (Config.MaxLate): the worker's --max-late and the
// coordinator's (run.Coordinator.MaxLate) when not given.
const DefaultMaxLate = 2 * time.Second

// ServiceAccountCA is where pods find the cluster's CA.
const ServiceAccountCA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

// InClusterClock is the API server's /version as a kubelet tells pods.
func InClusterClock() string {
	h, p := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if h == "" || p == "" {
		return ""
	}
	return "https://" + net.JoinHostPort(h, p) + "/version"
}

// RunFunc runs `loadgen run` with args and writes its result to jsonPath.
// A run that ended failing only its own verdict returns an error that
// wraps ErrOwnVerdict.
type RunFunc func(ctx context.Context, args []string, jsonPath string) error

// ErrOwnVerdict marks a run that measured its window and wrote its result
// but failed its own verdict: nothing succeeded, or the target stopped
// answering for a while (results.Summary.Verdict). A worker reports such
// a run as measured, not as a failed worker: the coordinator judges the
// merged run by the same verdict, as it does the errors (ShareArgs), and
// what the share measured is kept.
var ErrOwnVerdict = errors.New("the run failed its own verdict")

// Run measures the clock, waits for the start, runs this worker's
// share and prints its report line on out. The report is printed for a
// failure too (late, or the run failed), and the error returned.
func Run(ctx context.Context, cfg Config, run RunFunc, out io.Writer) error {
	rep := Report{Index: cfg.Index, StartAt: cfg.StartAt, Wire: k8s.WireVersion}
	rep.Host, _ = os.Hostname()
	fail := func(err error) error {
		rep.Error = err.Error()
		if line, lerr := rep.Line(); lerr == nil {
			_, _ = out.Write(line)
		}
		return err
	}
	if err := CheckWire(cfg.Wire, cfg.CoordinatorVersion, cfg.Version); err != nil {
		return fail(err)
	}
	share, err := ShareOf(cfg.Connections, cfg.Threads, cfg.Rate, cfg.Workers, cfg.Index)
	if err != nil {
		return fail(err)
	}
	var off time.Duration
	if cfg.Clock != "" {
		hc, err := clockClient(cfg.ClockCA)
		if err != nil {
			return fail(err)
		}
		o, err := MeasureOffset(ctx, hc, cfg.Clock)
		if err != nil {
			return fail(fmt.Errorf("clock: %w", err))
		}
		off = o.Offset
		rep.ClockOffset, rep.OffsetError, rep.ClockChecked = results.Duration(o.Offset), results.Duration(o.Error), true
	}
	late, err := WaitStart(ctx, cfg.StartAt, off, cfg.MaxLate)
	rep.Late = results.Duration(late)
	if err != nil {
		return fail(err)
	}
	if len(cfg.RunArgs) == 0 {
		return fail(errors.New("no `loadgen run` arguments after --"))
	}
	dir, err := leftover.TempDir("worker") // loadgen-worker-PID-…: loadgen cleanup's once the worker is gone
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.json")
	runErr := run(ctx, ShareArgs(cfg.RunArgs, share, path), path)
	r, err := store.ReadRun(path)
	if err != nil {
		if runErr != nil {
			return fail(runErr)
		}
		return fail(fmt.Errorf("the run wrote no result: %v", err))
	}
	rep.Run = r
	if runErr != nil && !errors.Is(runErr, ErrOwnVerdict) {
		return fail(runErr)
	}
	line, err := rep.Line()
	if err != nil {
		return err
	}
	_, err = out.Write(line)
	return err
}

// ShareArgs is the `loadgen run` command line of a worker's share: the
// Job's args (the URL last) with the share's -c, -t and -R, --json
// jsonPath, and --max-errors 100% first unless the args give one — a
// worker's errors are judged on the merged run, by the coordinator, so a
// share with a few is not a failed worker. args must not be empty.
func ShareArgs(args []string, share Share, jsonPath string) []string {
	out := make([]string, 0, len(args)+10)
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--max-errors") }) {
		out = append(out, "--max-errors", "100%")
	}
	url := args[len(args)-1]
	out = append(out, args[:len(args)-1]...)
	out = append(out, "-c", strconv.Itoa(share.Connections), "-t", strconv.Itoa(share.Threads))
	if share.Rate > 0 {
		out = append(out, "-R", strconv.FormatFloat(share.Rate, 'f', -1, 64))
	}
	return append(out, "--json", jsonPath, url)
}

// clockClient trusts the service account's CA when there is one. Without
// it (a worker run outside a pod) the Date header is still read: no
// credential is sent, and a wrong clock only makes the step refuse.
func clockClient(caFile string) (*http.Client, error) {
	tc := &tls.Config{}
	if b, err := os.ReadFile(caFile); err == nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("clock CA %s: no certificate", caFile)
		}
		tc.RootCAs = pool
	} else {
		tc.InsecureSkipVerify = true
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}, nil
}
