package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/nginxingress"
	"loadgen/results"
	"loadgen/results/report"
	"loadgen/results/store"
	"loadgen/targets/tlscert"
)

type sizeFlags struct {
	builtinFlags
	workers string
	payload string
	keyType string
	price   float64
	mtls    bool
}

func newSizeCmd() *cobra.Command {
	f := &sizeFlags{}
	cmd := &cobra.Command{
		Use:   "size [--workers 1,2,4] [-o DIR]",
		Short: "Size an ingress: RPS and TLS handshakes/s of a real nginx per worker_processes",
		Long: `Measure how a reverse proxy scales with its CPUs, as NGINX's Ingress sizing
study does: for each worker_processes count, requests/s with kept connections
and a 1 KiB body, and TLS handshakes/s with a new connection (a full RSA-2048
handshake, no session resumption) per request, with the CPU nginx spent.

loadgen starts everything itself on loopback: its httpbin target as a child
process, and for each worker count two real nginx instances (Debian's nginx,
generated configuration) proxying to it: one plaintext, one TLS with a
self-signed certificate that the load verifies. The steps run as a sweep
(resumable with --resume; loadgen report DIR shows the sizing table).

On a machine with few CPUs the generator, the target and nginx share them:
the table's flags say where the machine was saturated, and nginx's own CPU
column says how much it used. Size on a machine where the generator has CPUs
of its own for figures that measure nginx alone.`,
		Example: `  loadgen size
  loadgen size --workers 1,2 -d 10s --ladder c64t2 -o results/nginx-sizing
  loadgen size --workers 1,2 --mtls -o results/nginx-mtls-sizing
  loadgen report results/nginx-sizing --html sizing.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSize(cmd, f) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.workers, "workers", "", "worker_processes counts, comma-separated or a range 1..4 (default 1..CPUs)")
	fl.StringVar(&f.payload, "payload", sweep.DefaultSizingPayload, "response body size")
	fl.StringVar(&f.keyType, "key-type", string(nginxingress.DefaultSizingKeyType), "the TLS listener's key: rsa (RSA-2048, as NGINX's figures) or ecdsa (P-256)")
	fl.BoolVar(&f.mtls, "mtls", false, "mutual TLS: the TLS listeners require a client certificate (ssl_verify_client on), which the load presents (--key-type's kind, from a CA made for the run)")
	fl.Float64Var(&f.price, "cpu-price", 0, "what one CPU costs a month, e.g. 30 (any currency): adds each worker count's monthly cost to the table")
	f.register(fl, "size", sweep.DefaultSizingLadder, sweep.DefaultSizingDuration, sweep.DefaultSizingWarmup)
	return cmd
}

func runSize(cmd *cobra.Command, f *sizeFlags) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := f.applyFile(cmd.Flags()); err != nil {
		return err
	}
	if f.resume && f.out != "" {
		if err := f.fromSaved(cmd.Flags()); err != nil {
			return err
		}
	}
	f.check.out = stdout
	if store.IsStdout(f.check.junit) {
		stdout = stderr // standard output takes the JUnit report, the tables go to stderr
	}
	ladder, err := f.parse("size")
	if err != nil {
		return err
	}
	workers, err := nginxingress.ParseWorkers(f.workers, runtime.NumCPU())
	if err != nil {
		return fmt.Errorf("--workers %w", err)
	}
	if w := nginxingress.OverCPUs(workers, runtime.NumCPU()); w != "" {
		fmt.Fprintf(stderr, "loadgen: %s\n", w)
	}
	payload, err := sweep.ParseSize(f.payload)
	if err != nil {
		return fmt.Errorf("--payload: %w", err)
	}
	kt, err := tlscert.ParseKeyType(f.keyType)
	if err != nil {
		return fmt.Errorf("--key-type: %w", err)
	}
	base := *f.spec(ladder, "http1", payload)
	// The plan, with the paths named as startSizing names them: what a dry
	// run prints and a resume checks before nginx starts.
	planned := sweep.Sizing(base, sizingProxies(nginxingress.PlannedSizing(workers, f.mtls)), string(kt), sweep.SizingAt{})
	if f.dryRun {
		job := f.job(planned, f.out, "")
		return job.execute(ctx, stdout, stderr)
	}
	if err := sweep.CheckOut(f.out, f.resume); err != nil {
		return err
	}
	if f.resume {
		if err := sweep.CheckResume(f.out, planned, false); err != nil {
			return err // before nginx starts
		}
	}
	if _, err := nginxingress.Available(); err != nil {
		return failf("size needs nginx: %v", err) // the error says how to install it
	}
	cleanLeftovers(ctx, stderr)
	lab, err := startSizing(ctx, stderr, base, workers, kt, f.mtls)
	if err != nil {
		return failf("size: %v", err)
	}
	defer lab.Close()
	job := f.job(lab.spec, f.out, sweep.ResumeCommand("size", resumeFlags(cmd), f.out))
	job.note = lab.note
	job.extra = func(w io.Writer, steps []*results.Step) error {
		fmt.Fprintln(w, "ingress sizing: the best over the ladder per worker_processes count")
		return report.SizingTable(w, steps, f.price)
	}
	return job.execute(ctx, stdout, stderr)
}

// fromSaved takes, on --resume, what the command line and -f do not give
// from the sizing saved in -o (sweep.SizingFlags), so that
// `size -o DIR --resume` continues it.
func (f *sizeFlags) fromSaved(fl *pflag.FlagSet) error {
	saved, err := sweep.SavedFor(f.out, sweep.BuiltinSize)
	if err != nil {
		return err
	}
	for _, v := range sweep.SizingFlags(saved) {
		if !fl.Changed(v.Name) {
			if err := fl.Set(v.Name, v.Value); err != nil {
				return fmt.Errorf("--resume: the sizing saved in %s: %s %q: %v", f.out, v.Name, v.Value, err)
			}
		}
	}
	return nil
}

// sizingProxies are nginxingress's proxies as the sweep takes them
// (sweep.Sizing).
func sizingProxies(ps []nginxingress.SizingProxy) []sweep.SizingProxy {
	out := make([]sweep.SizingProxy, len(ps))
	for i, p := range ps {
		out[i] = sweep.SizingProxy(p)
	}
	return out
}

// startSizing starts the target and, for each worker count, a plaintext and
// a TLS nginx in front of it, and fills the spec's paths and watches. With
// mtls the TLS nginx requires a client certificate, which the TLS paths
// present: a CA made for the run issues it.
func startSizing(ctx context.Context, log io.Writer, base sweep.Spec, workers []int, kt tlscert.KeyType, mtls bool) (*demoPaths, error) {
	d, addr, pid, err := withHTTPBin(ctx, log)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			d.Close()
		}
	}()
	sz, err := nginxingress.StartSizing(ctx, nginxingress.SizingConfig{Upstream: addr, Workers: workers, KeyType: kt, MTLS: mtls})
	if err != nil {
		return nil, err
	}
	d.closers = append(d.closers, func() { sz.Close() })
	spec := sweep.Sizing(base, sizingProxies(sz.Proxies), string(kt), sweep.SizingAt{TargetPID: pid, CACert: sz.CACert, Cert: sz.ClientCert, Key: sz.ClientKey})
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	d.spec = spec
	d.note = nginxingress.SizingNote(pid, kt, mtls)
	ok = true
	return d, nil
}
