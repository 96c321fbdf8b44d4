package loadgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/http1"
)

// varyServer records what each request rendered: its path's seq and
// user, its X-Id header, its body.
type varyServer struct {
	*httptest.Server
	mu   sync.Mutex
	got  []varyGot
	bad  []string
	path *regexp.Regexp
}

type varyGot struct {
	seq        int
	user, id   string
	bodySeq    int
	bodyUser   string
	bodyRandOK bool
}

func newVaryServer(t *testing.T) *varyServer {
	t.Helper()
	s := &varyServer{path: regexp.MustCompile(`^/u/(\d+)/([a-z]+)$`)}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			N    int    `json:"n"`
			User string `json:"user"`
			R    int    `json:"r"`
		}
		m := s.path.FindStringSubmatch(r.URL.Path)
		err := json.Unmarshal(raw, &body)
		s.mu.Lock()
		defer s.mu.Unlock()
		if m == nil || err != nil || r.ContentLength != int64(len(raw)) {
			s.bad = append(s.bad, fmt.Sprintf("%s %q (%v)", r.URL.Path, raw, err))
			return
		}
		seq, _ := strconv.Atoi(m[1])
		s.got = append(s.got, varyGot{seq: seq, user: m[2], id: r.Header.Get("X-Id"), bodySeq: body.N, bodyUser: body.User, bodyRandOK: body.R >= 0 && body.R < 5})
	}))
	// One stream at a time: a loop's second slot waits its turn (a Start
	// put off), and must keep the values it drew.
	s.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1}
	startBoth(s.Server)
	t.Cleanup(s.Close)
	return s
}

var varyUsers = []string{"ada", "bob", "cy"}

// A request with fields renders them per request, on every driver and
// protocol: the target sees the seqs 1…N once each across the connections
// (and streams), the feed's rows in order (each row equally often; on one
// connection exactly in order), distinct version-4 UUIDs, and a body
// whose Content-Length is its rendered length, sharing the request's seq
// and row.
func TestRequestsThatVary(t *testing.T) {
	feed, err := protocol.ParseFeed("users.csv", []byte("user\nada\nbob\ncy\n"))
	if err != nil {
		t.Fatal(err)
	}
	forDrivers(t, func(t *testing.T) {
		for _, conns := range []int{1, 4} {
			t.Run(fmt.Sprintf("%d connections", conns), func(t *testing.T) {
				srv := newVaryServer(t)
				var d protocol.Dialer
				var err error
				if h2c {
					d, err = h2.NewDialer(h2.Config{
						URL: srv.URL + "/u/{{seq}}/{{row.user}}", Method: "POST", Feed: feed, Cleartext: true, Streams: 2,
						Headers: []string{"X-Id: {{uuid}}"},
						Body:    []byte(`{"n":{{seq}},"user":"{{row.user}}","r":{{rand 5}}}`),
					})
				} else {
					d, err = http1.NewDialer(http1.Config{
						URL: srv.URL + "/u/{{seq}}/{{row.user}}", Method: "POST", Feed: feed,
						Headers: []string{"X-Id: {{uuid}}"},
						Body:    []byte(`{"n":{{seq}},"user":"{{row.user}}","r":{{rand 5}}}`),
						TLS:     protocol.TLS{Insecure: overTLS},
					})
				}
				if err != nil {
					t.Fatal(err)
				}
				cfg := conf(conns, time.Minute)
				if h2c {
					cfg.Streams = 2
				}
				cfg.Threads, cfg.Driver, cfg.Requests = 1, driver, 300
				r, err := loadgen.Run(context.Background(), cfg, d)
				if err != nil {
					t.Fatal(err)
				}
				if r.Summary.Requests != 300 || r.Summary.Errors.Total() != 0 {
					t.Fatalf("%d requests, errors %+v", r.Summary.Requests, r.Summary.Errors)
				}
				srv.mu.Lock()
				defer srv.mu.Unlock()
				if len(srv.bad) > 0 || len(srv.got) != 300 {
					t.Fatalf("the target got %d good requests and these bad: %v", len(srv.got), srv.bad[:min(3, len(srv.bad))])
				}
				seqs, ids, rows := map[int]bool{}, map[string]bool{}, map[string]int{}
				for i, g := range srv.got {
					if seqs[g.seq] || g.seq < 1 || g.seq > 300 {
						t.Errorf("seq %d repeated or out of 1-300", g.seq)
					}
					seqs[g.seq] = true
					if ids[g.id] || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(g.id) {
						t.Errorf("X-Id %q repeated or not a v4 UUID", g.id)
					}
					ids[g.id] = true
					rows[g.user]++
					if g.bodySeq != g.seq || g.bodyUser != g.user || !g.bodyRandOK {
						t.Errorf("body seq %d user %s (rand ok %v), path seq %d user %s", g.bodySeq, g.bodyUser, g.bodyRandOK, g.seq, g.user)
					}
					if conns == 1 && !h2c && (g.seq != i+1 || g.user != varyUsers[i%3]) {
						t.Errorf("request %d on one connection: seq %d row %s, want %d %s", i, g.seq, g.user, i+1, varyUsers[i%3])
					}
				}
				for _, u := range varyUsers {
					if rows[u] != 100 {
						t.Errorf("row %s taken %d times of 300, want 100", u, rows[u])
					}
				}
			})
		}
	})
}
