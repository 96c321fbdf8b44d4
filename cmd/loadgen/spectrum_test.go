package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The expressions wrk2's users parse its -L and -U output with: the short
// list's lines, the rows of the spectrum as HdrHistogram's plotter reads
// them, and the #[…] trailer.
var (
	wrk2ListLine = regexp.MustCompile(`^\s*([0-9.]+)%\s+([0-9.]+)(us|ms|s)$`)
	wrk2Row      = regexp.MustCompile(`^\s*([0-9.]+)\s+([0-9.]+)\s+([0-9]+)\s+([0-9.]+|inf)$`)
	wrk2Mean     = regexp.MustCompile(`^#\[Mean\s+=\s+([0-9.]+), StdDeviation\s+=\s+([0-9.]+)\]$`)
	wrk2Max      = regexp.MustCompile(`^#\[Max\s+=\s+([0-9.]+), Total count\s+=\s+([0-9]+)\]$`)
	wrk2Buckets  = regexp.MustCompile(`^#\[Buckets\s+=\s+([0-9]+), SubBuckets\s+=\s+([0-9]+)\]$`)
)

// wrk2Block is one latency as wrk2 prints it, read back.
type wrk2Block struct {
	list       map[string][2]float64 // "99.000" → ms, and its rounding in ms
	rows       [][3]float64          // value (ms), percentile, total count
	mean, max  float64               // ms
	total      int64
	subBuckets int64
}

// parseWrk2 reads the block titled "Latency Distribution (HdrHistogram -
// title)" out of a run's output, failing the test where it strays from
// wrk2's layout.
func parseWrk2(t *testing.T, out, title string) wrk2Block {
	t.Helper()
	lines := strings.Split(out, "\n")
	i := 0
	for i < len(lines) && lines[i] != "  Latency Distribution (HdrHistogram - "+title+")" {
		i++
	}
	if i == len(lines) {
		t.Fatalf("no %q block in:\n%s", title, out)
	}
	b := wrk2Block{list: map[string][2]float64{}}
	for i++; i < len(lines) && lines[i] != ""; i++ {
		m := wrk2ListLine.FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("list line %q does not parse", lines[i])
		}
		unit := map[string]float64{"us": 1e-3, "ms": 1, "s": 1e3}[m[3]]
		b.list[m[1]] = [2]float64{wrk2Num(t, m[2]) * unit, 0.005 * unit} // two decimals
	}
	if len(b.list) != 8 || lines[i+1] != "  Detailed Percentile spectrum:" ||
		lines[i+2] != "       Value   Percentile   TotalCount 1/(1-Percentile)" || lines[i+3] != "" {
		t.Fatalf("%d list lines, then not wrk2's spectrum header:\n%s", len(b.list), strings.Join(lines[i:min(i+5, len(lines))], "\n"))
	}
	for i += 4; i < len(lines) && wrk2Row.MatchString(lines[i]); i++ {
		m := wrk2Row.FindStringSubmatch(lines[i])
		b.rows = append(b.rows, [3]float64{wrk2Num(t, m[1]), wrk2Num(t, m[2]), wrk2Num(t, m[3])})
		if (m[4] == "inf") != (m[2] == "1.000000") {
			t.Errorf("row %q: 1/(1-Percentile) is inf at 100%% and only there", lines[i])
		}
	}
	if i+3 >= len(lines) {
		t.Fatalf("no trailer after the rows")
	}
	mean, max, buckets := wrk2Mean.FindStringSubmatch(lines[i]), wrk2Max.FindStringSubmatch(lines[i+1]), wrk2Buckets.FindStringSubmatch(lines[i+2])
	if mean == nil || max == nil || buckets == nil || lines[i+3] != strings.Repeat("-", 58) {
		t.Fatalf("not wrk2's trailer and dashes:\n%s", strings.Join(lines[i:i+4], "\n"))
	}
	b.mean, b.max = wrk2Num(t, mean[1]), wrk2Num(t, max[1])
	b.total, _ = strconv.ParseInt(max[2], 10, 64)
	b.subBuckets, _ = strconv.ParseInt(buckets[2], 10, 64)
	return b
}

func wrk2Num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// check holds a block against the run's JSON (its .summary.requests and
// the latency object at key): ascending columns ending at every request,
// and figures that agree with the JSON's within the histogram's precision.
func (b wrk2Block) check(t *testing.T, run map[string]any, key string) {
	t.Helper()
	summary := run["summary"].(map[string]any)
	lat := summary[key].(map[string]any)
	requests := summary["requests"].(float64)
	ms := func(k string) float64 { return lat[k].(float64) / 1e3 }
	if len(b.rows) < 3 {
		t.Fatalf("%d rows", len(b.rows))
	}
	for i := 1; i < len(b.rows); i++ {
		p, r := b.rows[i-1], b.rows[i]
		if r[0] < p[0] || r[1] <= p[1] || r[2] < p[2] {
			t.Errorf("row %d %v after %v: not ascending", i, r, p)
		}
	}
	last := b.rows[len(b.rows)-1]
	if last[1] != 1 || last[2] != requests || float64(b.total) != requests || b.max != last[0] {
		t.Errorf("last row %v, #[Max %v, Total count %d]; the run: %v requests", last, b.max, b.total, requests)
	}
	// The histogram keeps 3 significant digits (a step of 1/1024 at
	// most); the text rounds to 0.001 ms, the short list to 0.01 of its unit.
	near := func(a, b, round float64) bool { return math.Abs(a-b) <= math.Max(a, b)/1024+round }
	// wrk2's rows step over p99 (0.989062, 0.990625): it lies between.
	var below, above float64
	for _, r := range b.rows {
		switch {
		case r[1] == 0.5 && !near(r[0], ms("p50_us"), 0.0005):
			t.Errorf("row at 50%%: %v ms, the JSON's p50 %v ms", r[0], ms("p50_us"))
		case r[1] <= 0.99:
			below = r[0]
		case above == 0:
			above = r[0]
		}
	}
	if p99 := ms("p99_us"); p99 < below-0.0005 || p99 > above+0.0005 {
		t.Errorf("the JSON's p99 %v ms is not between the rows around 99%%: %v … %v", p99, below, above)
	}
	for pct, k := range map[string]string{"50.000": "p50_us", "75.000": "p75_us", "90.000": "p90_us", "99.000": "p99_us", "100.000": "max_us"} {
		if v := b.list[pct]; !near(v[0], ms(k), v[1]) {
			t.Errorf("%s%%: %v ms, the JSON's %s %v ms", pct, v[0], k, ms(k))
		}
	}
	if !near(b.mean, ms("mean_us"), 0.0005) || b.subBuckets != 2048 {
		t.Errorf("#[Mean %v, SubBuckets %d]; the JSON's mean %v ms", b.mean, b.subBuckets, ms("mean_us"))
	}
}

func readRunJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var run map[string]any
	if err := json.Unmarshal(raw, &run); err != nil {
		t.Fatal(err)
	}
	return run
}

// -L prints wrk2's recorded latency, -U the uncorrected one after it, each
// as wrk2 prints them, between Thread Stats and the requests line. A long
// --timeout: the blocks are what is tested, and a machine that stalls
// past the default timeout would fail the run as a target that stopped
// answering.
func TestRunWrk2Spectrum(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	dir := t.TempDir()
	t.Run("-L closed loop", func(t *testing.T) {
		path := filepath.Join(dir, "l.json")
		code, out, stderr := cli(t, "run", "-c", "2", "-t", "1", "-d", "1s", "--timeout", "30s", "-L", "--json", path, url)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		run := readRunJSON(t, path)
		parseWrk2(t, out, "Recorded Latency").check(t, run, "latency")
		if strings.Contains(out, "Uncorrected Latency") || strings.Contains(out, "  Latency Distribution\n") {
			t.Errorf("-L alone prints more than the recorded latency's block:\n%s", out)
		}
		if !regexp.MustCompile(`(?m)^    Req/Sec .*\n  Latency Distribution \(HdrHistogram - Recorded Latency\)$`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^-{58}\n  \d+ requests in `).MatchString(out) {
			t.Errorf("the block is not between Thread Stats and the requests line, as in wrk2:\n%s", out)
		}
	})
	t.Run("-U open loop", func(t *testing.T) {
		path := filepath.Join(dir, "u.json")
		code, out, stderr := cli(t, "run", "-c", "2", "-t", "1", "-d", "1s", "--timeout", "30s", "-R", "500", "-U", "--json", path, url)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		run := readRunJSON(t, path)
		parseWrk2(t, out, "Recorded Latency").check(t, run, "latency")
		parseWrk2(t, out, "Uncorrected Latency (measured without taking delayed starts into account)").check(t, run, "uncorrected")
		if i, j := strings.Index(out, "HdrHistogram - Recorded"), strings.Index(out, "HdrHistogram - Uncorrected"); i > j {
			t.Errorf("the uncorrected block comes first:\n%s", out)
		}
	})
	// --latency is wrk's flag and wrk2's: wrk's list in a closed loop (wrk
	// has no -R), wrk2's block with -R (wrk2's README runs -R2000 --latency).
	t.Run("--latency with -R", func(t *testing.T) {
		path := filepath.Join(dir, "latency.json")
		code, out, stderr := cli(t, "run", "-c", "2", "-t", "1", "-d", "1s", "--timeout", "30s", "-R", "500", "--latency", "--json", path, url)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		parseWrk2(t, out, "Recorded Latency").check(t, readRunJSON(t, path), "latency")
		if strings.Contains(out, "  Latency Distribution\n") || strings.Contains(out, "Uncorrected Latency") {
			t.Errorf("--latency -R prints more than wrk2's block:\n%s", out)
		}
	})
	t.Run("--latency -L closed loop", func(t *testing.T) {
		path := filepath.Join(dir, "both.json")
		code, out, stderr := cli(t, "run", "-c", "2", "-t", "1", "-d", "1s", "--timeout", "30s", "--latency", "-L", "--json", path, url)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		parseWrk2(t, out, "Recorded Latency").check(t, readRunJSON(t, path), "latency")
		if !regexp.MustCompile(`(?m)^  Latency Distribution\n     50% +[\d.]+(us|ms|s)\n(.*\n){3}  Latency Distribution \(HdrHistogram`).MatchString(out) {
			t.Errorf("want wrk's list, then wrk2's block:\n%s", out)
		}
	})
	t.Run("-U without -R", func(t *testing.T) {
		code, _, stderr := cli(t, "run", "-d", "1s", "--timeout", "30s", "-U", url)
		if first := strings.SplitN(stderr, "\n", 2)[0]; code != exitUsage || !strings.Contains(first, "-U") || !strings.Contains(first, "-R") {
			t.Errorf("exit %d, want %d and a line naming -U and -R: %s", code, exitUsage, stderr)
		}
	})
}
