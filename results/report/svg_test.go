package report

import (
	"bytes"
	"encoding/xml"
	"math"
	"regexp"
	"strings"
	"testing"
)

func TestLogAxis(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string // labelled ticks
	}{
		{25e3, 7e6, "20µs 50µs 100µs 200µs 500µs 1ms 2ms 5ms 10ms"},
		{55e3, 210e3, "50µs 60µs 80µs 100µs 200µs 300µs"},
		{1e3, 2e7, "1µs 10µs 100µs 1ms 10ms 100ms"},
		{4e6, 4e6, "2ms 3ms 4ms 5ms 6ms"},
	} {
		c := &lineChart{LogY: true, YFmt: latencyTick, Series: []series{{Points: []point{{0, tc.lo, ""}, {1, tc.hi, ""}}}}}
		ys := c.yAxis()
		var got []string
		for _, tk := range ys.ticks {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("[%g, %g]: ticks %v, want %s", tc.lo, tc.hi, got, tc.want)
		}
		if ys.lo > tc.lo || ys.hi < tc.hi {
			t.Errorf("[%g, %g]: axis [%g, %g] does not hold the data", tc.lo, tc.hi, ys.lo, ys.hi)
		}
	}
}

func TestLinearAxis(t *testing.T) {
	c := &lineChart{Series: []series{{Points: []point{{0, 7461, ""}, {1, 61011, ""}}}}}
	ys := c.yAxis()
	var got []string
	for _, tk := range ys.ticks {
		got = append(got, tk.Label)
	}
	if strings.Join(got, " ") != "0 20k 40k 60k 80k" {
		t.Errorf("ticks %v", got)
	}
	// Deltas may be negative: the axis spans them.
	c = &lineChart{Series: []series{{Points: []point{{0, -618e3, ""}, {1, 2.2e6, ""}}}}}
	if ys := c.yAxis(); ys.lo > -618e3 || ys.hi < 2.2e6 {
		t.Errorf("axis [%g, %g]", ys.lo, ys.hi)
	}
}

// A failed step is a gap in its line, not a zero; the SVG is well-formed.
func TestChartGapsAndXML(t *testing.T) {
	c := &lineChart{ID: "t", Title: `a "chart" <&>`, XPad: 0.5, XTicks: []tick{{0, "c1t1"}, {1, "c4t4"}, {2, "c16t16"}, {3, "c64t64"}},
		Series: []series{{Name: "nginx", Color: "#2563eb", Markers: true,
			Points: []point{{0, 1, ""}, {1, 2, ""}, {2, math.NaN(), ""}, {3, 4, ""}}}}}
	svg := c.SVG()
	d := regexp.MustCompile(`<path class="series"[^>]* d="([^"]*)"`).FindStringSubmatch(svg)
	if d == nil || strings.Count(d[1], "M") != 2 || strings.Count(d[1], "L") != 1 {
		t.Errorf("path %q: want two segments around the gap", d)
	}
	if n := strings.Count(svg, `<circle class="mark"`); n != 3 {
		t.Errorf("%d markers, want 3", n)
	}
	dec := xml.NewDecoder(bytes.NewReader([]byte(svg)))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Errorf("SVG is not well-formed XML: %v", err)
			}
			break
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{thousands(61011.4), "61\u202f011"},
		{thousands(999), "999"},
		{thousands(1234567), "1\u202f234\u202f567"},
		{latencyTick(250e3), "250µs"},
		{latencyTick(1.5e6), "1.5ms"},
		{latencyTick(-618e3), "−618µs"},
		{latencyTick(2e9), "2s"},
		{compact(25000), "25k"},
		{compact(0.025), "0.025"},
		{compact(1.5e6), "1.5M"},
		{micro("+44.0us"), "+44.0µs"},
		{micro("1.2ms"), "1.2ms"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// Without a browser: the page holds its charts, its styles and script,
// and nothing it would fetch.
func TestHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, fixtureSweep(t), Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	// Per payload: latency, throughput, added, errors, proxy CPU, CPU/1k, memory.
	if n := strings.Count(page, `<svg class="chart"`); n != 14 {
		t.Errorf("%d charts, want 7 for each of 2 payloads", n)
	}
	for _, want := range []string{"<style>", "data-checked", "At a glance", "Environment and versions", "payload 1 KiB", "c64t64",
		"Proxy CPU per 1000 req/s", "Latency added over baseline", "2.69ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, re := range []string{`<link\b`, `\bsrc=`, `@import`, `url\(`, `https://`} {
		if regexp.MustCompile(re).MatchString(page) {
			t.Errorf("the page would fetch something: %s", re)
		}
	}
	for _, absent := range []string{"CNI path matrix", "Ingress sizing"} {
		if strings.Contains(page, absent) {
			t.Errorf("%q shown without its data", absent)
		}
	}
	var cni bytes.Buffer
	if err := HTML(&cni, fixtureCNI(t), Options{Title: "CNI"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cni.String(), "CNI path matrix") || !strings.Contains(cni.String(), "<title>CNI — loadgen report</title>") {
		t.Error("the CNI results lack their matrix or title")
	}
}
