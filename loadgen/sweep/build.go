package sweep

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"loadgen/loadgen"
	"loadgen/loadgen/client"
	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/results"
)

// BuildStep makes one step's engine configuration and Dialer: the path's
// target (with the endpoint for the step's payload, over HTTP; the payload
// as the message size otherwise), the rung's connections and threads, the
// step's rate, the spec's timing — its Dialer through client.Build, as
// `loadgen run`'s is.
func BuildStep(spec *Spec, p Path, st Step) (loadgen.Config, protocol.Dialer, error) {
	cs := client.Spec{
		Protocol: spec.Protocol, Call: spec.Call, Data: spec.Data, Protoset: spec.Protoset, NetNS: p.NetNS,
		Messages: spec.Messages, Window: spec.Window,
		Proto: spec.Proto, ImportPaths: spec.ImportPaths,
	}
	if spec.Feed != "" {
		// Read for each step, so that every step starts at the first row,
		// as a run does.
		src, err := os.ReadFile(spec.Feed)
		if err != nil {
			return loadgen.Config{}, nil, fmt.Errorf("feed: %w", err)
		}
		if cs.Feed, err = protocol.ParseFeed(spec.Feed, src); err != nil {
			return loadgen.Config{}, nil, fmt.Errorf("feed %w", err)
		}
	}
	cs.TLS.CAFile, cs.TLS.Insecure = p.CACert, p.Insecure
	cs.TLS.CertFile, cs.TLS.KeyFile = p.Cert, p.Key
	var cfg loadgen.Config
	cfg.Target = p.URL
	if spec.Endpoint != "" {
		cfg.Target = strings.TrimRight(p.URL, "/") + strings.ReplaceAll(spec.Endpoint, "{size}", strconv.Itoa(st.Payload))
	} else {
		cfg.Size = st.Payload
	}
	cfg.NewConn = p.NewConn
	cfg.Connections, cfg.Threads = st.Rung.Connections, st.Rung.Threads
	cfg.Duration, cfg.Warmup = results.Duration(spec.Duration), results.Duration(spec.Warmup)
	cfg.Timeout = results.Duration(spec.Timeout)
	if cfg.Timeout == 0 {
		cfg.Timeout = results.Duration(loadgen.DefaultTimeout)
	}
	cfg.Rate = st.Rate
	if st.Rate > 0 && (spec.Arrival != "" || spec.JitterPct != 0) {
		p, err := spec.pacer(st.Rate, pace.ClockSeed())
		if err != nil {
			return cfg, nil, err
		}
		cfg.Pacer = p
	}
	d, err := client.Build(&cs, &cfg.Config)
	return cfg, d, err
}
