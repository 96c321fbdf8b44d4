package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/quic-go/quic-go/http3"
)

// h3Result is what an h3load run did: its requests' latencies, the
// failed ones, the bytes read, over how long.
type h3Result struct {
	lat     []time.Duration
	failed  int
	read    int64
	elapsed time.Duration
}

// h3load is the bench's HTTP/3 peer, no HTTP/3 load tool being packaged
// here (Debian's curl and h2load are built without QUIC): conns closed
// loops, each its own QUIC connection by quic-go's own HTTP/3 client
// (http3.Transport, as quic-go's example client uses it), GETting url one
// request at a time for d. Certificates are not verified (-k).
func h3load(ctx context.Context, url string, conns int, d time.Duration) (h3Result, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu  sync.Mutex
		res h3Result
		wg  sync.WaitGroup
		err error
	)
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableCompression: true}
			defer tr.Close()
			c := &http.Client{Transport: tr}
			var lat []time.Duration
			var failed int
			var read int64
			for ctx.Err() == nil {
				req, rerr := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				if rerr != nil {
					mu.Lock()
					err = rerr
					mu.Unlock()
					return
				}
				t0 := time.Now()
				resp, rerr := c.Do(req)
				if rerr == nil {
					var n int64
					n, rerr = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					read += n
					if rerr == nil && resp.StatusCode >= 400 {
						rerr = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				switch {
				case rerr == nil:
					lat = append(lat, time.Since(t0))
				case ctx.Err() == nil:
					failed++
				}
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.failed += failed
			res.read += read
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.lat)
	if err == nil && len(res.lat) == 0 {
		err = errors.New("no request succeeded")
	}
	return res, err
}

// percentile is the q-th (0..1) of sorted latencies.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// print writes r in wrk's layout, the lines bench.sh parses.
func (r h3Result) print(w io.Writer) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Nanoseconds())/1e6) }
	fmt.Fprintf(w, "  Latency Distribution\n     50%% %s\n     99%% %s\n", ms(percentile(r.lat, 0.5)), ms(percentile(r.lat, 0.99)))
	fmt.Fprintf(w, "  %d requests in %.2fs, %dB read\n", len(r.lat), r.elapsed.Seconds(), r.read)
	if r.failed > 0 {
		fmt.Fprintf(w, "  Non-2xx or 3xx responses: %d\n", r.failed)
	}
	fmt.Fprintf(w, "Requests/sec: %.2f\n", float64(len(r.lat))/r.elapsed.Seconds())
}
