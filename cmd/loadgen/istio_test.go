package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"loadgen/results/report"
	"loadgen/results/store"
)

// TestReportCSVIstio checks that report --csv-istio of a real run writes
// istio/tools' header and the run's own figures in its units (µs, whole
// seconds).
func TestReportCSVIstio(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	dir := t.TempDir()
	run, out := filepath.Join(dir, "run.json"), filepath.Join(dir, "istio.csv")
	if code, _, stderr := cli(t, "run", "-q", "-c", "2", "-t", "1", "-n", "200", "--json", run, url); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli(t, "report", run, "--csv-istio", out); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	r, err := store.ReadRun(run)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || strings.Join(recs[0][:len(report.IstioColumns)], ",") != strings.Join(report.IstioColumns, ",") {
		t.Fatalf("want istio/tools' header and one row, got %q", recs)
	}
	row := map[string]string{}
	for i, k := range recs[0] {
		row[k] = recs[1][i]
	}
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	lat := r.Summary.Latency
	for k, want := range map[string]string{"p50": us(lat.P50.D()), "p99": us(lat.P99.D()), "p999": us(lat.P999.D()),
		"NumThreads": "2", "RequestedQPS": "99999999"} {
		if row[k] != want {
			t.Errorf("%s = %q, want %q", k, row[k], want)
		}
	}
	if !strings.Contains(row["Labels"], "_qps_0_c_2_") {
		t.Errorf("Labels %q: want _qps_0_c_2_ (closed loop, 2 connections)", row["Labels"])
	}
}
