package httpbin

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Multi-hop targets, isotope-style: a server with Calls answers a request
// only once its calls to the next services (Config.Calls, Fanout of them
// at once) have answered. Each call carries the hop number of the server
// it reaches (HeaderHop) and what is left of the caller's time
// (HeaderTimeout); each answer says how deep the chain answered
// (HeaderHops). A call that fails makes the answer a 502 whose one-line
// body, and HeaderHopFailed, name the hop that failed: a 502 that names
// a deeper hop is passed up as it came. /healthz and /stats never call.
//
// The calls are fasthttp's HostClient (a bounded pool of kept-alive
// connections per URL) on pooled requests and responses; the calls past
// the first run on a pool of goroutines that wait for work, so that a
// request allocates nothing once the pools are warm.

// The hop headers.
const (
	// HeaderHop, on a request, is the hop number of the server it
	// reaches: 1, the first, when absent.
	HeaderHop = "X-Loadgen-Hop"
	// HeaderHops, on an answer, is the deepest hop that answered: 1 for
	// one server, N for a chain of N.
	HeaderHops = "X-Loadgen-Hops"
	// HeaderHopFailed, on a 502, is the hop whose call failed.
	HeaderHopFailed = "X-Loadgen-Hop-Failed"
	// HeaderTimeout, on a call, is the milliseconds left of the caller's
	// deadline: the callee's own calls end by then.
	HeaderTimeout = "X-Loadgen-Timeout"
)

// MaxHops is the deepest hop served: a request past it (Calls that lead
// back to a server of the chain) is answered 508.
const MaxHops = 64

// Defaults of the calls.
const (
	DefaultCallTimeout = 10 * time.Second
	DefaultCallConns   = 512
)

// maxFanout bounds Fanout.
const maxFanout = 1024

// callWorkerIdle is how long a goroutine of the calls waits for another
// call before it ends.
const callWorkerIdle = 10 * time.Second

// maxFailLine bounds the one-line body of a 502.
const maxFailLine = 512

// hop is one of the next services.
type hop struct {
	url    string // as given, for messages
	host   string // the Host header
	uri    string // path and query; empty: the served request's
	client *fasthttp.HostClient
}

// parseCall checks one --call URL: http://host[:port][/path[?query]].
func parseCall(raw string) (*hop, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("httpbin: call %q: want http://host:port[/path]", raw)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	h := &hop{url: raw, host: u.Host}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		h.uri = u.RequestURI()
	}
	h.client = &fasthttp.HostClient{Addr: addr, Name: "loadgen-httpbin"}
	return h, nil
}

// caller makes a server's calls.
type caller struct {
	hops    []*hop
	fanout  int
	timeout time.Duration
	fans    sync.Pool // *fan
	work    chan *callJob
	idle    atomic.Int64 // goroutines waiting on work (start)
	done    <-chan struct{}
	wg      *sync.WaitGroup
}

func newCaller(cfg Config, done <-chan struct{}, wg *sync.WaitGroup) (*caller, error) {
	c := &caller{fanout: cfg.CallsAtOnce(), timeout: cfg.CallTimeout, work: make(chan *callJob), done: done, wg: wg}
	for _, raw := range cfg.Calls {
		h, err := parseCall(raw)
		if err != nil {
			return nil, err
		}
		h.client.MaxConns = cfg.CallConns
		h.client.MaxConnWaitTimeout = cfg.CallTimeout // a full pool waits, within the call's time
		h.client.NoDefaultUserAgentHeader = true
		h.client.ReadBufferSize = 16 << 10 // mesh proxies add headers
		c.hops = append(c.hops, h)
	}
	c.fans.New = func() any {
		f := &fan{jobs: make([]callJob, c.fanout)}
		for i := range f.jobs {
			f.jobs[i].f = f
		}
		return f
	}
	return c, nil
}

// close closes the kept connections.
func (c *caller) close() {
	for _, h := range c.hops {
		h.client.CloseIdleConnections()
	}
}

// hopIn is what the calls need of the request served.
type hopIn struct {
	method, uri, body []byte
	hop               int       // the server's hop number
	deadline          time.Time // the calls end by then
}

// fan is one request's calls, pooled.
type fan struct {
	jobs []callJob
	wg   sync.WaitGroup
	msg  []byte // a 502's body
}

// callJob is one call of a fan.
type callJob struct {
	f        *fan
	to       *hop
	req      fasthttp.Request
	resp     fasthttp.Response
	deadline time.Time
	err      error
}

// hopResult is what a server answers of its calls.
type hopResult struct {
	hops   int    // the deepest hop that answered
	failed int    // the hop that failed; 0: none
	status int    // the answer's status when one failed: 502 (508 past MaxHops)
	msg    []byte // its one-line body
}

// call makes the calls of a request and waits for their answers. The
// result's msg lives in f, which the caller gives back (release) once it
// wrote the answer.
func (c *caller) call(in *hopIn) (*fan, hopResult) {
	f := c.fans.Get().(*fan)
	f.msg = f.msg[:0]
	res := hopResult{hops: in.hop}
	var num [20]byte
	next := strconv.AppendInt(num[:0], int64(in.hop+1), 10)
	var left [20]byte
	ms := strconv.AppendInt(left[:0], max(int64(time.Until(in.deadline)/time.Millisecond), 1), 10)
	for i := range f.jobs {
		j := &f.jobs[i]
		j.to = c.hops[i%len(c.hops)]
		j.deadline = in.deadline
		r := &j.req
		r.Header.SetMethodBytes(in.method)
		if j.to.uri != "" {
			r.SetRequestURI(j.to.uri)
		} else {
			r.SetRequestURIBytes(in.uri)
		}
		r.Header.SetHost(j.to.host)
		r.Header.SetBytesV(HeaderHop, next)
		r.Header.SetBytesV(HeaderTimeout, ms)
		if len(in.body) > 0 {
			r.SetBodyRaw(in.body)
		}
	}
	f.wg.Add(len(f.jobs) - 1)
	for i := 1; i < len(f.jobs); i++ {
		c.start(&f.jobs[i])
	}
	f.jobs[0].run()
	f.wg.Wait()
	for i := range f.jobs {
		c.judge(&f.jobs[i], in.hop, &res, f)
	}
	res.msg = f.msg
	return f, res
}

// release gives f back once its answer is written.
func (c *caller) release(f *fan) {
	for i := range f.jobs {
		j := &f.jobs[i]
		j.req.Reset()
		j.resp.Reset()
		j.to, j.err = nil, nil
	}
	if cap(f.msg) > 4*maxFailLine {
		f.msg = nil
	}
	c.fans.Put(f)
}

// judge adds j's answer to res: the deepest hop, the first failure.
func (c *caller) judge(j *callJob, self int, res *hopResult, f *fan) {
	if j.err == nil {
		if n, ok := parseHop(j.resp.Header.Peek(HeaderHops)); ok && n > res.hops {
			res.hops = n
		}
	}
	if res.failed != 0 {
		return
	}
	resp := &j.resp
	switch code := resp.StatusCode(); {
	case j.err != nil:
		res.failed = self + 1
		f.msg = fmt.Appendf(f.msg[:0], "hop %d (%s %s) failed: %v", self+1, j.req.Header.Method(), j.url(), j.err)
	case code == fasthttp.StatusBadGateway && len(resp.Header.Peek(HeaderHopFailed)) > 0:
		// A deeper hop failed: its line is passed up as it came.
		n, _ := parseHop(resp.Header.Peek(HeaderHopFailed))
		res.failed = n
		f.msg = append(f.msg[:0], firstLine(resp.Body())...)
	case code < 200 || code > 299:
		res.failed = self + 1
		f.msg = fmt.Appendf(f.msg[:0], "hop %d (%s %s) answered %d: %s", self+1, j.req.Header.Method(), j.url(), code, firstLine(resp.Body()))
	default:
		return
	}
	res.status = fasthttp.StatusBadGateway
	if len(f.msg) > maxFailLine {
		f.msg = append(f.msg[:maxFailLine-3], "..."...)
	}
	f.msg = append(f.msg, '\n')
}

// url is the URL j called, for messages.
func (j *callJob) url() string {
	if j.to.uri != "" {
		return j.to.url
	}
	return "http://" + j.to.host + string(j.req.RequestURI())
}

// firstLine is b up to its first line break.
func firstLine(b []byte) []byte {
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		return b[:i]
	}
	return b
}

// run makes the call.
func (j *callJob) run() {
	j.err = j.to.client.DoDeadline(&j.req, &j.resp, j.deadline)
	if errors.Is(j.err, fasthttp.ErrTimeout) {
		j.err = fmt.Errorf("no answer within the call's time: %w", j.err)
	}
}

// start runs j on a waiting goroutine, or on a new one when none waits.
// idle counts the goroutines committed to take a call: a start that
// takes one from it sends to a goroutine sure to receive.
func (c *caller) start(j *callJob) {
	if c.idle.Add(-1) >= 0 {
		select {
		case c.work <- j:
		case <-c.done: // the goroutines are ending: the call runs here
			j.run()
			j.f.wg.Done()
		}
		return
	}
	c.idle.Add(1)
	c.wg.Add(1)
	go c.worker(j)
}

// worker runs j, then the calls it is given, until none comes for
// callWorkerIdle or the server closes.
func (c *caller) worker(j *callJob) {
	defer c.wg.Done()
	timer := time.NewTimer(callWorkerIdle)
	defer timer.Stop()
	for {
		j.run()
		timer.Reset(callWorkerIdle)
		c.idle.Add(1) // before Done: the request's next calls may count on it
		j.f.wg.Done()
		select {
		case j = <-c.work:
			continue
		case <-c.done:
			return
		case <-timer.C:
		}
		// Idle: leave, unless a start counted on this goroutine already.
		if v := c.idle.Load(); v > 0 && c.idle.CompareAndSwap(v, v-1) {
			return
		}
		select {
		case j = <-c.work:
		case <-c.done:
			return
		}
	}
}

// parseHop reads a hop number: 1 up to MaxHops+1.
func parseHop(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 3 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n >= 1 && n <= MaxHops+1
}

// parseTimeout reads HeaderTimeout, in milliseconds; 0 when absent or bad.
func parseTimeout(b []byte) time.Duration {
	if len(b) == 0 || len(b) > 9 {
		return 0
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return time.Duration(n) * time.Millisecond
}

// hopOf reads a request's hop headers: its hop number (1 when absent),
// and its deadline, from now, bounded by timeout. A bad hop number, or
// one past MaxHops, is refused with the answer to give.
func hopOf(hopHdr, timeoutHdr []byte, timeout time.Duration) (int, time.Time, *reply) {
	n := 1
	if len(hopHdr) > 0 {
		var ok bool
		if n, ok = parseHop(hopHdr); !ok {
			return 0, time.Time{}, &reply{status: 400, ctype: textType, text: HeaderHop + ": want a hop number, 1 up to " + strconv.Itoa(MaxHops) + "\n"}
		}
		if n > MaxHops {
			return 0, time.Time{}, &reply{status: 508, ctype: textType,
				text: "hop " + strconv.Itoa(n) + ": more than " + strconv.Itoa(MaxHops) + " hops: does --call lead back into the chain?\n"}
		}
	}
	if t := parseTimeout(timeoutHdr); t > 0 && t < timeout {
		timeout = t
	}
	return n, time.Now().Add(timeout), nil
}

// chained tells whether a request to rt takes part in a chain: every
// endpoint but /healthz and /stats.
func chained(rt *route) bool {
	return rt == nil || rt.ep != epHealthz && rt.ep != epStats
}
