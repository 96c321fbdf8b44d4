package envoy

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxyproc"
)

// The stand-in envoy is this test binary, run through a shell script
// named envoy: it records each command line and the bootstrap it was
// given, answers --mode validate after reading the bootstrap strictly, and
// otherwise listens on every listener and the admin until SIGTERM.
const (
	fakeEnv    = "LOADGEN_FAKE_ENVOY_LOG"
	fakeBinEnv = "LOADGEN_FAKE_ENVOY_BIN"
)

func TestMain(m *testing.M) {
	if log := os.Getenv(fakeEnv); log != "" {
		os.Exit(fakeEnvoy(log, os.Args[1:]))
	}
	os.Exit(m.Run())
}

type fakeCall struct {
	Args []string `json:"args"`
	Conf string   `json:"conf"`
	UID  int      `json:"uid"`
}

func fakeEnvoy(log string, args []string) int {
	i := slices.Index(args, "-c")
	if i < 0 || i+1 >= len(args) {
		fmt.Fprintln(os.Stderr, "fake envoy: no -c")
		return 1
	}
	conf, err := os.ReadFile(args[i+1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake envoy:", err)
		return 1
	}
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return 1
	}
	json.NewEncoder(f).Encode(fakeCall{Args: args, Conf: string(conf), UID: os.Getuid()})
	f.Close()
	var doc any
	if err := yaml.Unmarshal(conf, &doc); err != nil {
		fmt.Fprintln(os.Stderr, "fake envoy:", err)
		return 1
	}
	js, _ := json.Marshal(doc)
	b := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(js, b); err != nil {
		fmt.Fprintln(os.Stderr, "fake envoy: bootstrap:", err)
		return 1
	}
	if slices.Contains(args, "--mode") {
		fmt.Printf("configuration '%s' OK\n", args[i+1])
		return 0
	}
	addrs := []string{}
	for _, l := range b.StaticResources.Listeners {
		sa := l.Address.GetSocketAddress()
		addrs = append(addrs, net.JoinHostPort(sa.Address, fmt.Sprint(sa.GetPortValue())))
	}
	admin := b.Admin.Address.GetSocketAddress()
	adminAddr := net.JoinHostPort(admin.Address, fmt.Sprint(admin.GetPortValue()))
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake envoy:", err)
			return 1
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	ln, err := net.Listen("tcp", adminAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake envoy:", err)
		return 1
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "http.inbound_0.0.0.0_8080.downstream_rq_total: 3\nhttp.outbound_0.0.0.0_8081.downstream_rq_total: 4\nhttp.stats.downstream_rq_total: 9\n")
	}))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	return 0
}

// installFake puts a shell script named envoy first on PATH and returns
// the file its calls are recorded in.
func installFake(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nexec \"$" + fakeBinEnv + "\" \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "envoy"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "calls.jsonl")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakeBinEnv, self)
	t.Setenv(fakeEnv, log)
	return log
}

func readCalls(t *testing.T, log string) []fakeCall {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var calls []fakeCall
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c fakeCall
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	return calls
}

// TestStartRunsEnvoy checks that Start validates, then runs envoy with
// exactly the flags Istio's pilot-agent passes and the bootstrap Render
// makes; Close stops it.
func TestStartRunsEnvoy(t *testing.T) {
	log := installFake(t)
	ports, err := proxyproc.FreePorts("127.0.0.1", 4)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Layout: Istio, Sidecar: layout.Loopback(ports[0], 8080, ports[1], 8081, ports[2]),
		Stats: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), ports[3]), NodeID: "sidecar~127.0.0.1~x.default~default.svc.cluster.local", NodeCluster: "x.default"}
	dir := t.TempDir()
	cfg.Dir = dir
	p, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := p.PIDs()
	if err != nil || len(pids) != 1 {
		t.Errorf("PIDs() = %v, %v", pids, err)
	}
	if n, err := p.Requests(); err != nil || n != 7 {
		t.Errorf("Requests() = %d, %v; want inbound 3 + outbound 4 from the admin's counters", n, err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, pid := range pids {
		if proxyproc.Alive(pid, "envoy") || proxyproc.Alive(pid, "envoy.test") {
			t.Errorf("pid %d outlived Close", pid)
		}
	}
	calls := readCalls(t, log)
	path := filepath.Join(dir, confFile)
	want := [][]string{
		{"--mode", "validate", "-c", path},
		{"-c", path, "--concurrency", "2", "--drain-time-s", "45", "--drain-strategy", "immediate",
			"--local-address-ip-version", "v4", "--disable-hot-restart", "--log-level", "warning"},
	}
	if len(calls) != len(want) {
		t.Fatalf("envoy was run %d times, want %d: %+v", len(calls), len(want), calls)
	}
	rendered, _ := cfg.Render(YAML)
	for i, c := range calls {
		if !slices.Equal(c.Args, want[i]) {
			t.Errorf("call %d: envoy %q, want envoy %q", i, c.Args, want[i])
		}
		if c.Conf != string(rendered) {
			t.Errorf("call %d: the bootstrap given is not Render's", i)
		}
	}
}

func TestStartValidateFails(t *testing.T) {
	installFake(t)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "envoy"), []byte("#!/bin/sh\necho 'error initializing configuration: bad listener' >&2\nexit 1\n"), 0o755)
	t.Setenv("PATH", bin)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err := Start(context.Background(), pod(AppMesh))
	if err == nil || !strings.Contains(err.Error(), "envoy --mode validate rejected") || !strings.Contains(err.Error(), "bad listener") {
		t.Errorf("Start: %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("failed Start left %s", entries[0].Name())
	}
}

func TestStartWithoutEnvoy(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), pod(Istio))
	if err == nil || !strings.Contains(err.Error(), "no Envoy package exists") {
		t.Errorf("Start without envoy: %v", err)
	}
}

func TestArgsAppMesh(t *testing.T) {
	c := pod(AppMesh)
	if args := c.Args("/e.yaml"); slices.Contains(args, "--concurrency") {
		t.Errorf("App Mesh's envoy keeps its default concurrency: %q", args)
	}
	c.Sidecar.Workers = 3
	if args := c.Args("/e.yaml"); !slices.Contains(args, "3") {
		t.Errorf("Workers 3: %q", args)
	}
}

func TestSumStats(t *testing.T) {
	n, err := sumStats(strings.NewReader("a: 1\nb: 2\nc: 5\nbad line\n"), "a", "c")
	if err != nil || n != 6 {
		t.Errorf("sumStats = %d, %v", n, err)
	}
	if _, err := sumStats(strings.NewReader("a: x\n"), "a"); err == nil {
		t.Error("bad value: no error")
	}
}

func FuzzSumStats(f *testing.F) {
	f.Add("http.x.downstream_rq_total: 3\n")
	f.Add("a: 1\nhttp.x.downstream_rq_total: 3\nhttp.x.downstream_rq_total:  4\n")
	const name = "http.x.downstream_rq_total"
	f.Fuzz(func(t *testing.T, s string) {
		got, err := sumStats(strings.NewReader(s), name)
		if err != nil {
			return
		}
		// A plain reference: every line that is exactly "name: value".
		var want uint64
		for line := range strings.Lines(s) {
			line = strings.TrimRight(line, "\r\n")
			if v, ok := strings.CutPrefix(line, name+": "); ok {
				n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				if err != nil {
					t.Fatalf("%q: summed where the value %q is not a number", s, v)
				}
				want += n
			}
		}
		if got != want {
			t.Fatalf("%q: sum %d, the lines add up to %d", s, got, want)
		}
	})
}
