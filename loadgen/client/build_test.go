package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/compare"
)

// Build takes the run's figures from its configuration, adds a window's
// streams, checks and builds the Dialer, and records the Spec New
// completed back in the configuration.
func TestBuild(t *testing.T) {
	c := results.Config{Target: "127.0.0.1:9", Connections: 3, Size: 100, Timeout: results.Duration(2 * time.Second)}
	s := Spec{Protocol: "grpc-stream", Window: 4}
	d, err := Build(&s, &c)
	if err != nil {
		t.Fatal(err)
	}
	if cl, ok := d.(io.Closer); ok {
		cl.Close()
	}
	if s.Target != "127.0.0.1:9" || s.Connections != 3 || s.Size != 100 || s.Timeout != 2*time.Second || s.Streams != 4 {
		t.Errorf("spec %+v: want the configuration's target, connections, size, timeout and the window's 4 streams", s)
	}
	if c.Protocol != "grpc-stream" || c.Streams != 4 || c.Window != 4 || c.Size != 100 {
		t.Errorf("recorded %+v", c)
	}

	// HTTP: the headers go with the request; New completes the URL.
	c = results.Config{Target: "127.0.0.1:9/get", Connections: 1, Headers: []string{"X-A: 1"}, Timeout: results.Duration(time.Second)}
	s = Spec{}
	if _, err := Build(&s, &c); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Headers, []string{"X-A: 1"}) || c.Target != "http://127.0.0.1:9/get" || c.Protocol != "http1" || c.Method != "GET" {
		t.Errorf("spec %+v, recorded %+v", s, c)
	}

	// A refused option is refused for every caller, and what was asked is
	// still recorded.
	c = results.Config{Target: "https://127.0.0.1:9/", Connections: 1, Timeout: results.Duration(time.Second)}
	s = Spec{TLS: protocol.TLS{MinVersion: tls.VersionTLS11}}
	if _, err := Build(&s, &c); err == nil || !strings.Contains(err.Error(), "use 1.2 or 1.3") {
		t.Errorf("TLS 1.1: %v, want refused", err)
	}
	if c.Target != "https://127.0.0.1:9/" {
		t.Errorf("recorded target %q after a refusal", c.Target)
	}
}

// A Dialer that could not be built fails the run (1) when the target was
// unreachable, and is a usage error (2) otherwise: the command line must
// change.
func TestBuildExit(t *testing.T) {
	_, bad := Build(&Spec{Protocol: "nonesuch"}, &results.Config{Target: "http://127.0.0.1:9/"})
	if bad == nil {
		t.Fatal("Build took protocol nonesuch")
	}
	for _, tc := range []struct {
		name string
		err  error
		want compare.Exit
	}{
		{"none", nil, compare.OK},
		{"unreachable", fmt.Errorf("cannot connect to 127.0.0.1:9: %w: %w", ErrUnreachable, errors.New("grpc: reflection: connection refused")), compare.Failed},
		{"a bad spec", bad, compare.Usage},
		{"an option's error", errors.New("--cacert: no such file"), compare.Usage},
	} {
		if got := BuildExit(tc.err); got != tc.want {
			t.Errorf("%s: BuildExit(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
