package worker

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Offset is a clock's offset from a reference clock (reference minus
// local), within ±Error.
type Offset struct {
	Offset time.Duration
	Error  time.Duration
	Probes int
}

// ProbeEvery is the spacing of MeasureOffset's probes: with a reference
// that tells whole seconds (an HTTP Date header), the second's edge is
// found within about half of it plus half a round trip.
const ProbeEvery = 10 * time.Millisecond

// MeasureOffset measures the local clock against the Date header of url
// (the API server's /version: every pod can reach it, no credentials
// needed). Date has a resolution of one second, so the probes look for the
// instant the reference's second changes; that edge, seen between two
// probes, pins the offset. It takes at most a little over a second.
func MeasureOffset(ctx context.Context, c *http.Client, url string) (Offset, error) {
	type probe struct {
		sent, recv time.Time
		date       time.Time
	}
	get := func() (probe, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return probe{}, err
		}
		p := probe{sent: time.Now()}
		resp, err := c.Do(req)
		if err != nil {
			return p, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		p.recv = time.Now()
		d, err := http.ParseTime(resp.Header.Get("Date"))
		if err != nil {
			return p, fmt.Errorf("clock reference %s: no usable Date header: %v", url, err)
		}
		p.date = d
		return p, nil
	}
	prev, err := get()
	if err != nil {
		return Offset{}, err
	}
	n := 1
	limit := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(limit) {
		select {
		case <-ctx.Done():
			return Offset{}, ctx.Err()
		case <-time.After(ProbeEvery):
		}
		cur, err := get()
		if err != nil {
			return Offset{}, err
		}
		n++
		if cur.date.After(prev.date) {
			// The reference's second turned after it answered prev and
			// before it answered cur: locally within [prev.sent, cur.recv].
			half := cur.recv.Sub(prev.sent) / 2
			edge := prev.sent.Add(half)
			return Offset{Offset: cur.date.Sub(edge), Error: half, Probes: n}, nil
		}
		prev = cur
	}
	return Offset{}, fmt.Errorf("clock reference %s: its Date did not change for 1.5s", url)
}
