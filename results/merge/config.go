package merge

import (
	"fmt"
	"reflect"
	"strings"

	"loadgen/results"
)

// shares are the Config fields that differ per worker by design: each
// worker runs its share of the connections, threads, rate and requests.
var shares = map[string]bool{"Connections": true, "Threads": true, "Rate": true, "Requests": true}

// sameLoad refuses inputs that are not runs of one load: another schema,
// another load model (closed or open loop), or another configuration than
// the first run's, but for the shares.
func sameLoad(in []Input) error {
	first := in[0]
	for _, x := range in[1:] {
		if x.Run.Schema != first.Run.Schema {
			return fmt.Errorf("%s is schema %d but %s is schema %d: latency histograms count different requests across schemas; record them with one loadgen version",
				x.Source, x.Run.Schema, first.Source, first.Run.Schema)
		}
		if first.Run.Config.OpenLoop() != x.Run.Config.OpenLoop() {
			return fmt.Errorf("%s is %s but %s is %s: a closed loop and an open loop are different loads; merge only the workers of one run",
				first.Source, loopModel(first.Run.Config), x.Source, loopModel(x.Run.Config))
		}
		if d := configDiff(first.Run.Config, x.Run.Config); d != "" {
			return fmt.Errorf("%s and %s are runs of different loads (%s): merge only the workers of one run",
				first.Source, x.Source, d)
		}
	}
	return nil
}

// loopModel names a run's load model for messages. The rate is a share
// (each worker of an open loop sends its part of it), but a closed loop and
// an open one are different loads: one's latency is not the other's.
func loopModel(c results.Config) string {
	switch {
	case c.Schedule != "":
		return "open loop (-R " + c.Schedule + ")"
	case c.Rate > 0:
		return fmt.Sprintf("open loop (-R %g)", c.Rate)
	}
	return "closed loop (no -R)"
}

// configDiff names the first field (by its JSON name) where a and b
// differ, ignoring the shares; empty when they agree.
func configDiff(a, b results.Config) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if shares[f.Name] {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			return fmt.Sprintf("%s %v vs %v", name, va.Field(i).Interface(), vb.Field(i).Interface())
		}
	}
	return ""
}
