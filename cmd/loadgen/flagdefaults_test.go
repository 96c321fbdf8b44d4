package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s/run"
	"loadgen/meshes/nginxingress"
	"loadgen/results"
)

// flagDefault is the default a command's flag shows (pflag's DefValue).
func flagDefault(t *testing.T, cmd *cobra.Command, name string) string {
	t.Helper()
	f := cmd.Flags().Lookup(name)
	if f == nil {
		t.Fatalf("%s has no --%s", cmd.Name(), name)
	}
	return f.DefValue
}

// checkDefaults checks each flag's default against the library's
// constant, in the flag's text (a duration parsed: 5s and 5.0s are one).
func checkDefaults(t *testing.T, cmd *cobra.Command, want map[string]any) {
	t.Helper()
	for name, w := range want {
		got := flagDefault(t, cmd, name)
		switch w := w.(type) {
		case time.Duration:
			d, err := time.ParseDuration(got)
			if err != nil || d != w {
				t.Errorf("%s --%s defaults to %q, want the library's %v", cmd.Name(), name, got, w)
			}
		case int:
			if got != strconv.Itoa(w) {
				t.Errorf("%s --%s defaults to %q, want the library's %d", cmd.Name(), name, got, w)
			}
		case string:
			if got != w {
				t.Errorf("%s --%s defaults to %q, want the library's %q", cmd.Name(), name, got, w)
			}
		default:
			t.Fatalf("--%s: a %T", name, w)
		}
	}
}

// The flags of a sweep of flags alone default to loadgen/sweep's plan.
func TestSweepFlagDefaults(t *testing.T) {
	checkDefaults(t, newSweepCmd(), map[string]any{
		"ladder": sweep.DefaultLadder, "payloads": sweep.DefaultPayloads, "rate": sweep.DefaultRates,
		"protocol": sweep.DefaultProtocol, "endpoint": sweep.DefaultEndpoint,
		"duration": sweep.DefaultDuration, "repeats": sweep.DefaultRepeats,
	})
}

// size's flags default to the sizing's constants.
func TestSizeFlagDefaults(t *testing.T) {
	checkDefaults(t, newSizeCmd(), map[string]any{
		"payload": sweep.DefaultSizingPayload, "key-type": string(nginxingress.DefaultSizingKeyType),
		"ladder": sweep.DefaultSizingLadder, "duration": sweep.DefaultSizingDuration, "warmup": sweep.DefaultSizingWarmup,
	})
}

// k8s run's waits and retries default to the coordinator's.
func TestK8sRunFlagDefaults(t *testing.T) {
	checkDefaults(t, newK8sRunCmd(), map[string]any{
		"start-lead": run.DefaultStartLead, "target-wait": run.DefaultTargetWait, "start-retries": run.DefaultStartRetries,
	})
}

// run's --percentiles defaults to the summary's percentiles, and its help
// names the ones the summary holds, both from results.
func TestRunPercentilesFlagDefault(t *testing.T) {
	cmd := newRunCmd()
	if got, want := flagDefault(t, cmd, "percentiles"), "50,90,95,99,99.9,99.99"; got != want {
		t.Errorf("run --percentiles defaults to %q, want %q", got, want)
	}
	p, err := results.ParsePercentiles(flagDefault(t, cmd, "percentiles"))
	if err != nil || len(p) != len(results.DefaultPercentiles) {
		t.Errorf("run --percentiles' default reads as %v, %v; want results.DefaultPercentiles", p, err)
	}
	if got, want := summaryPercentiles(), "p50, p75, p90, p95, p99, p99.9 and p99.99"; got != want {
		t.Errorf("summaryPercentiles() = %q, want %q", got, want)
	}
}
