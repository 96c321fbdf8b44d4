package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"loadgen/loadgen/metrics"
	"loadgen/results"
)

// serveMetrics starts --prometheus: the Prometheus text format on
// http://ADDR/metrics while the load runs. Failing to listen is a usage
// error (the address is taken, say), before any load.
func serveMetrics(addr string, stderr io.Writer) (*metrics.Exporter, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--prometheus %s: %w", addr, err)
	}
	x := metrics.New()
	mux := http.NewServeMux()
	mux.Handle("/metrics", x.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "loadgen: --prometheus: %v\n", err)
		}
	}()
	fmt.Fprintf(stderr, "metrics on http://%s/metrics\n", ln.Addr())
	return x, func() { srv.Close() }, nil
}

// holdMetrics keeps the final figures served for d after the load, for a
// last scrape, and tells whether it held them the whole time: Ctrl-C
// (ctx done) ends the hold, as it ends a run, and the command then exits
// 130 with what it printed and wrote kept.
func holdMetrics(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// errorsByClass names a run's error counts for the exporter.
func errorsByClass(e results.Errors) map[string]int64 {
	return map[string]int64{"connect": e.Connect, "read": e.Read, "write": e.Write,
		"timeout": e.Timeout, "status": e.Status, "protocol": e.Protocol}
}
