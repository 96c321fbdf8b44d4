package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"loadgen/loadgen/metrics"
	"loadgen/results"
)

// serveMetrics starts --prometheus: the Prometheus text format on
// http://ADDR/metrics (url) while the load runs. Failing to listen is a
// usage error (the address is taken, say), before any load. Every
// loadgen series carries the run's labels.
func serveMetrics(addr string, labels results.Labels, stderr io.Writer) (x *metrics.Exporter, url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--prometheus %s: %w", addr, err)
	}
	x = metrics.New(labels)
	mux := http.NewServeMux()
	mux.Handle("/metrics", x.Handler())
	srv := servePage(ln, mux, "--prometheus", stderr)
	url = "http://" + ln.Addr().String() + "/metrics"
	fmt.Fprintf(stderr, "metrics on %s\n", url)
	return x, url, func() { srv.Close() }, nil
}

// holdMetrics keeps the final figures served on url for d after the load,
// for a last scrape, saying so on stderr. Ctrl-C (ctx done) ends the hold
// and, as every linger, leaves the exit status as it was: a finished run's
// is its verdict's.
func holdMetrics(ctx context.Context, d time.Duration, stderr io.Writer, url string) {
	linger(ctx, d, stderr, fmt.Sprintf("loadgen: --prometheus-hold: serving the final figures on %s for %s (Ctrl-C ends it)", url, d))
}
