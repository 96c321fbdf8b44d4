package report_test

import (
	"testing"

	"loadgen/results/report"
)

// --latency means wrk's list on a closed loop and wrk2's -L report on an
// open one; -U needs -R.
func TestWrkFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags report.WrkFlags
		want  report.WrkOptions
		err   string
	}{
		{"none", report.WrkFlags{}, report.WrkOptions{}, ""},
		{"--latency closed: wrk's list", report.WrkFlags{Latency: true}, report.WrkOptions{Latency: true}, ""},
		{"--latency open: wrk2's -L", report.WrkFlags{Latency: true, Open: true}, report.WrkOptions{Spectrum: true}, ""},
		{"-L closed", report.WrkFlags{Spectrum: true}, report.WrkOptions{Spectrum: true}, ""},
		{"-L open", report.WrkFlags{Spectrum: true, Open: true}, report.WrkOptions{Spectrum: true}, ""},
		{"--latency -L closed", report.WrkFlags{Latency: true, Spectrum: true}, report.WrkOptions{Latency: true, Spectrum: true}, ""},
		{"-U open", report.WrkFlags{Uncorrected: true, Open: true}, report.WrkOptions{Uncorrected: true}, ""},
		{"-U closed", report.WrkFlags{Uncorrected: true}, report.WrkOptions{Uncorrected: true},
			"-U prints the uncorrected latency of an open-loop run: add -R (without it each latency counts from its actual send already, and -L prints it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.flags.Options()
			if got.Latency != tc.want.Latency || got.Spectrum != tc.want.Spectrum || got.Uncorrected != tc.want.Uncorrected {
				t.Errorf("Options() = %+v, want %+v", got, tc.want)
			}
			err := tc.flags.Check()
			if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Errorf("Check() = %v, want %q", err, tc.err)
			}
		})
	}
}
