package live

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// histOf is a histogram of n latencies spread evenly over [from, to].
func histOf(n int, from, to time.Duration) *hist.Histogram {
	h := hist.New()
	for i := range n {
		h.Record(from + time.Duration(i)*(to-from)/time.Duration(max(1, n-1)))
	}
	return h
}

// fixtureRun is a finished open-loop run of 3 s at 100/s with its
// timeline.
func fixtureRun() *results.Run {
	run := &results.Run{Config: results.Config{Rate: 100}, Interrupted: false,
		Generator: results.Cost{CPUs: 2, Utilization: 0.95, Saturated: true},
		Machine:   &results.MachineCost{CPUs: 2, Utilization: 0.5, BusyCores: 1},
		Notes:     []string{"a note"}}
	s := &run.Summary
	s.Requests, s.RPS, s.Duration = 300, 100, results.Duration(3*time.Second)
	s.Errors.Timeout = 2
	s.Latency = results.Latency{Count: 302, P50: results.Duration(250 * time.Microsecond),
		P99: results.Duration(1500 * time.Microsecond), P999: results.Duration(2 * time.Millisecond)}
	s.Pacing = &results.Pacing{Asked: 100, Achieved: 100.5, Sent: 302}
	for i := range 3 {
		run.Timeline = append(run.Timeline, results.Interval{Start: results.Duration(time.Duration(i) * time.Second),
			Duration: results.Duration(time.Second), Requests: 100, RPS: 100, P50: results.Duration(250 * time.Microsecond),
			P99: results.Duration(1500 * time.Microsecond)})
	}
	return run
}

func fixtureStep(i int, path string, run *results.Run) *results.Step {
	st := &results.Step{Index: i, ID: fmt.Sprintf("%s_c1t1_100B_closed_r1", path), Path: path, Rung: "c1t1",
		Connections: 1, Threads: 1, Payload: 100, Repeat: 1, Run: run}
	if run == nil {
		st.Failed = "connect: refused"
	}
	return st
}

func getJSON(t *testing.T, h http.Handler, path string) (map[string]any, *httptest.ResponseRecorder) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1:8089"
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, rec.Body)
	}
	return m, rec
}

// dig follows keys (strings, or ints for arrays) into decoded JSON.
func dig(t *testing.T, v any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("not an object at %q: %v", k, v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("no key %q in %v", k, m)
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("no element %d in %v", k, v)
			}
			v = a[k]
		}
	}
	return v
}

// The snapshot a page polls has the shape the page reads: the run live,
// then the run's result and timeline; a sweep's rows with their figures,
// flags and proxy CPU; the flags' words; the last events.
func TestSnapshotShape(t *testing.T) {
	s := New(KindSweep, "sweep: 2 steps")
	h := Handler(s, Options{})
	s.Planned(2)
	s.Begin(RunInfo{Label: "baseline c1t1 100B", Step: "baseline_c1t1_100B_closed_r1", Planned: 3 * time.Second, CPUs: 2,
		Asked: func(time.Duration) float64 { return 100 }})
	s.Progress(Progress{Elapsed: time.Second, Requests: 100, RPS: 100, Latency: histOf(100, 100*time.Microsecond, 2*time.Millisecond)})
	s.Progress(Progress{Elapsed: 2 * time.Second, Requests: 200, Errors: 1, RPS: 100, Latency: histOf(2000, time.Millisecond, 3*time.Millisecond)})

	m, _ := getJSON(t, h, StatePath)
	if dig(t, m, "kind") != "sweep" || dig(t, m, "done") != false || dig(t, m, "planned_steps") != 2.0 {
		t.Errorf("head: %v", m)
	}
	if n := len(dig(t, m, "legend").([]any)); n != 4 || !strings.HasPrefix(dig(t, m, "legend", 2, "meaning").(string), "generator saturated") {
		t.Errorf("legend: %v", dig(t, m, "legend"))
	}
	if dig(t, m, "run", "state") != "running" || dig(t, m, "run", "open_loop") != true || dig(t, m, "run", "cpus_allowed") != 2.0 {
		t.Errorf("run: %v", dig(t, m, "run"))
	}
	live := dig(t, m, "run", "live").(map[string]any)
	if live["requests"] != 200.0 || live["errors"] != 1.0 || live["rps"] != 100.0 || live["asked_rps"] != 100.0 {
		t.Errorf("live figures: %v", live)
	}
	if p99 := dig(t, live, "p99", "us").(float64); p99 < 2900 || p99 > 3100 {
		t.Errorf("live p99 %v µs, want the second interval's, about 3000", p99)
	}
	if dig(t, live, "p99_9", "text") == "-" {
		t.Error("no p99.9 for an interval of 2000 latencies")
	}
	if _, ok := dig(t, m, "run").(map[string]any)["final"]; ok {
		t.Error("a final figure while running")
	}
	tl := dig(t, m, "run", "timeline").([]any)
	if len(tl) != 2 || dig(t, tl, 1, "t") != 1.0 || dig(t, tl, 1, "requests") != 100.0 || dig(t, tl, 1, "errors") != 1.0 {
		t.Errorf("timeline: %v", tl)
	}
	for _, k := range []string{"d", "rps", "asked", "p50_us", "p99_us", "p99_9_us"} {
		dig(t, tl, 1, k)
	}

	// The step ends: the result's figures and timeline, its row.
	run := fixtureRun()
	st := fixtureStep(0, "baseline", run)
	st.Watched = []results.ProcessCost{{Name: "nginx", Role: "proxy", CPUMean: 0.25}, {Name: "target", Role: "target", CPUMean: 1}}
	s.Step(st)
	s.Step(fixtureStep(1, "nginx", nil))
	for i := range MaxEvents + 5 {
		s.Event(fmt.Sprintf("line %d", i))
	}
	s.End("done")

	m, _ = getJSON(t, h, StatePath)
	final := dig(t, m, "run", "final").(map[string]any)
	if final["requests"] != 300.0 || final["errors"] != 2.0 || final["rps"] != 100.0 || final["asked_rps"] != 100.0 || final["sent_rps"] != 100.5 {
		t.Errorf("final figures: %v", final)
	}
	if dig(t, final, "p50", "us") != 250.0 || dig(t, final, "p99", "text") != "1.50ms" || dig(t, final, "p99_9", "us") != 2000.0 {
		t.Errorf("final latency: %v", final)
	}
	if final["flags"] != "G" || final["gen_util"] != 0.95 || final["machine_util"] != 0.5 {
		t.Errorf("final flags and CPU: %v", final)
	}
	if dig(t, m, "run", "state") != "done" || dig(t, m, "done") != true || dig(t, m, "outcome") != "done" {
		t.Errorf("state: %v %v", dig(t, m, "run", "state"), m["outcome"])
	}
	tl = dig(t, m, "run", "timeline").([]any)
	if len(tl) != 3 {
		t.Fatalf("timeline after the end: %d points, want the result's 3", len(tl))
	}
	// The live utilization carries over to the result's interval that
	// ended when the live one did.
	if _, ok := tl[1].(map[string]any)["machine_util"]; !ok {
		t.Logf("no machine reading carried over (no /proc/stat?): %v", tl[1])
	}
	steps := dig(t, m, "steps").([]any)
	if len(steps) != 2 {
		t.Fatalf("%d rows", len(steps))
	}
	row := steps[0].(map[string]any)
	if row["id"] != "baseline_c1t1_100B_closed_r1" || row["path"] != "baseline" || row["rung"] != "c1t1" || row["payload"] != "100B" ||
		row["rps"] != 100.0 || row["errors"] != 2.0 || row["flags"] != "G" || row["proxy_cpu"] != 0.25 {
		t.Errorf("row: %v", row)
	}
	if dig(t, row, "p50", "text") != "250us" || dig(t, row, "p99", "us") != 1500.0 {
		t.Errorf("row latency: %v", row)
	}
	if failed := steps[1].(map[string]any); failed["flags"] != "F" || failed["failed"] != "connect: refused" {
		t.Errorf("failed row: %v", failed)
	}
	ev := dig(t, m, "events").([]any)
	if len(ev) != MaxEvents || ev[0] != "line 5" || ev[MaxEvents-1] != fmt.Sprintf("line %d", MaxEvents+4) {
		t.Errorf("events: %d, %v … %v", len(ev), ev[0], ev[len(ev)-1])
	}
}

// A run longer than MaxPoints seconds folds its points: the page's data
// stays bounded, as do a sweep's rows and the events.
func TestFixedMemory(t *testing.T) {
	s := New(KindRun, "run")
	s.Begin(RunInfo{Label: "x", CPUs: 1})
	h := histOf(10, time.Millisecond, 2*time.Millisecond)
	for i := 1; i <= 3*MaxPoints+7; i++ {
		s.Progress(Progress{Elapsed: time.Duration(i) * time.Second, Requests: int64(10 * i), RPS: 10, Latency: h})
	}
	snap := s.Snapshot()
	tl := snap.Run.Timeline
	if len(tl) > MaxPoints+1 || len(tl) < MaxPoints/2 {
		t.Errorf("%d points", len(tl))
	}
	var n int64
	for _, p := range tl {
		n += p.Requests
	}
	if n != int64(10*(3*MaxPoints+7)) || snap.Run.PerPoint < 2 {
		t.Errorf("folded points count %d requests, %v s each", n, snap.Run.PerPoint)
	}
	if last := tl[len(tl)-1]; last.T+last.D != float64(3*MaxPoints+7) {
		t.Errorf("last point ends at %v", last.T+last.D)
	}
	for i := range MaxSteps + 3 {
		s.Step(fixtureStep(i, "p", nil))
	}
	if snap := s.Snapshot(); len(snap.Steps) != MaxSteps || snap.Dropped != 3 || snap.Steps[0].Index != 3 {
		t.Errorf("%d rows, %d dropped, first %d", len(snap.Steps), snap.Dropped, snap.Steps[0].Index)
	}
}

// Feeds and polls at once: the race detector (go test -race) finds no
// shared write.
func TestConcurrentUpdates(t *testing.T) {
	s := New(KindSweep, "sweep")
	srv := httptest.NewServer(Handler(s, Options{}))
	defer srv.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(srv.URL + StatePath)
				if err != nil {
					t.Error(err)
					return
				}
				var snap Snapshot
				if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
					t.Errorf("poller %d: %v", g, err)
				}
				resp.Body.Close()
			}
		}()
	}
	h := histOf(50, time.Millisecond, 5*time.Millisecond)
	for step := range 20 {
		id := fmt.Sprintf("p_c1t1_100B_closed_r%d", step)
		s.Begin(RunInfo{Label: id, Step: id, CPUs: 2})
		var wg2 sync.WaitGroup
		wg2.Add(2)
		go func() {
			defer wg2.Done()
			for i := 1; i <= 20; i++ {
				s.Progress(Progress{Elapsed: time.Duration(i) * 100 * time.Millisecond, Requests: int64(i), RPS: 10, Latency: h})
			}
		}()
		go func() {
			defer wg2.Done()
			for i := range 20 {
				s.Event(fmt.Sprintf("step %d line %d", step, i))
				_ = s.Snapshot()
			}
		}()
		wg2.Wait()
		st := fixtureStep(step, "p", fixtureRun())
		st.ID = id
		s.Step(st)
	}
	s.End("done")
	close(stop)
	wg.Wait()
	snap := s.Snapshot()
	if len(snap.Steps) != 20 || !snap.Done || snap.Run.Final == nil {
		t.Errorf("%d steps, done %v, final %v", len(snap.Steps), snap.Done, snap.Run.Final)
	}
}

// The handler serves the page and its data, read only, to loopback names
// only, and answers 304 when nothing changed; the page fetches nothing
// but its data.
func TestHandler(t *testing.T) {
	s := New(KindRun, "run http://127.0.0.1/get")
	h := Handler(s, Options{})
	do := func(method, path, host string, hdr map[string]string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, path, nil)
		req.Host = host
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		h.ServeHTTP(rec, req)
		return rec
	}
	page := do("GET", "/", "localhost:8089", nil)
	if page.Code != 200 || !strings.HasPrefix(page.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %v", page.Code, page.Header())
	}
	body := page.Body.String()
	if strings.Contains(body, "/*STYLE*/") || strings.Contains(body, "/*SCRIPT*/") || !strings.Contains(body, `id="chart-latency"`) {
		t.Error("the page is not assembled")
	}
	for _, bad := range []string{"src=", "href=", "@import", "url(", "https://"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page refers to something outside it: %q", bad)
		}
	}
	if csp := page.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	for _, host := range []string{"127.0.0.1:8089", "[::1]:8089", "localhost", "127.0.0.2:1"} {
		if rec := do("GET", StatePath, host, nil); rec.Code != 200 {
			t.Errorf("Host %s: %d", host, rec.Code)
		}
	}
	for _, host := range []string{"evil.example:8089", "10.0.0.1:8089", "localhost.evil.example"} {
		if rec := do("GET", StatePath, host, nil); rec.Code != http.StatusForbidden {
			t.Errorf("Host %s: %d, want 403", host, rec.Code)
		}
	}
	if rec := httptest.NewRecorder(); true {
		req := httptest.NewRequest("GET", StatePath, nil)
		req.Host = "evil.example"
		Handler(s, Options{AnyHost: true}).ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Errorf("AnyHost: %d", rec.Code)
		}
	}
	if rec := do("POST", StatePath, "127.0.0.1", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
	if rec := do("GET", "/other", "127.0.0.1", nil); rec.Code != http.StatusNotFound {
		t.Errorf("/other: %d", rec.Code)
	}
	first := do("GET", StatePath, "127.0.0.1", nil)
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if rec := do("GET", StatePath, "127.0.0.1", map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
		t.Errorf("unchanged: %d, want 304", rec.Code)
	}
	s.Event("something")
	if rec := do("GET", StatePath, "127.0.0.1", map[string]string{"If-None-Match": etag}); rec.Code != 200 || rec.Header().Get("ETag") == etag {
		t.Errorf("changed: %d %s", rec.Code, rec.Header().Get("ETag"))
	}
}

// --ui's address: loopback unless a host is named.
func TestListen(t *testing.T) {
	for _, c := range []struct {
		addr     string
		loopback bool
		host     string
	}{{":0", true, "127.0.0.1"}, {"0", true, "127.0.0.1"}, {"localhost:0", true, "127.0.0.1"}, {"127.0.0.1:0", true, "127.0.0.1"}} {
		ln, lb, err := Listen(c.addr)
		if err != nil {
			t.Errorf("%s: %v", c.addr, err)
			continue
		}
		host := ln.Addr().String()[:strings.LastIndex(ln.Addr().String(), ":")]
		if lb != c.loopback || host != c.host {
			t.Errorf("%s: listens on %s, loopback %v", c.addr, ln.Addr(), lb)
		}
		ln.Close()
	}
	for _, bad := range []string{"nonsense", "127.0.0.1", "99999"} {
		if ln, _, err := Listen(bad); err == nil {
			ln.Close()
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestTarget(t *testing.T) {
	if got := Target("http://user:secret@127.0.0.1:8080/get"); strings.Contains(got, "secret") || got != "http://127.0.0.1:8080/get" {
		t.Errorf("Target: %s", got)
	}
	if got := Target("http://127.0.0.1:8080/get"); got != "http://127.0.0.1:8080/get" {
		t.Errorf("Target: %s", got)
	}
}
