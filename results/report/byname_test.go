package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

// mixRun is the fixture run as a request mix of three names.
func mixRun(t *testing.T) []*Sweep {
	t.Helper()
	sweeps := fixtureRun(t)
	run := *sweeps[0].Steps[0].Run
	ms := func(f float64) results.Duration { return results.Duration(f * float64(time.Millisecond)) }
	run.RequestsByName = []results.NamedRequests{
		{Name: "search", Weight: 3, WeightShare: 0.5, Share: 0.499, Requests: 4990, RPS: 499, Status: map[int]int64{200: 4990},
			Latency: results.Latency{Count: 4990, P50: ms(1.2), P90: ms(2), P99: ms(3.4), Max: ms(9)}},
		{Name: "POST /post", Weight: 2, WeightShare: 1.0 / 3, Share: 0.334, Requests: 3340, RPS: 334, Status: map[int]int64{200: 3330, 503: 10},
			Errors: results.Errors{Status: 10}, Latency: results.Latency{Count: 3340, P50: ms(0.09), P90: ms(0.1), P99: ms(0.2), Max: ms(1)}},
		{Name: "GET /slow", Weight: 1, WeightShare: 1.0 / 6, Share: 0.167, Requests: 1660, RPS: 166,
			Errors: results.Errors{Timeout: 10}, Status: map[int]int64{200: 1660}, Latency: results.Latency{Count: 1670, P50: ms(20), P90: ms(30), P99: ms(2000), Max: ms(2000)}},
	}
	return []*Sweep{SingleRun("mix.json", &run)}
}

// A request mix's run reports its figures by name in the text summary,
// Markdown and HTML.
func TestByName(t *testing.T) {
	sweeps := mixRun(t)
	run := sweeps[0].Steps[0].Run
	var txt bytes.Buffer
	if err := Wrk(&txt, run, WrkOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  Requests by name (share: of the requests sent; latency: every request of the name):\n" +
			"    request      weight  share  requests   req/s     p50     p99           errors  status\n" +
			"    search      3 (50%)  49.9%      4990  499.00  1.20ms  3.40ms                0  200: 4990\n" +
			"    POST /post  2 (33%)  33.4%      3340  334.00  90.0us   200us   10 (status 10)  200: 3330, 503: 10\n" +
			"    GET /slow   1 (17%)  16.7%      1660  166.00  20.0ms   2.00s  10 (timeout 10)  200: 1660\n",
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text: no\n%s\nin\n%s", want, txt.String())
		}
	}
	var md bytes.Buffer
	if err := Markdown(&md, sweeps, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| request | weight | share | requests | req/s | p50 | p90 | p99 | max | errors | status |\n|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|\n",
		"| GET /slow | 1 (16.7%) | 16.7% | 1660 | 166.00 | 20.0ms | 30.0ms | 2.00s | 2.00s | 10 (timeout 10) | 200: 1660 |\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown: no\n%s\nin\n%s", want, md.String())
		}
	}
	var html bytes.Buffer
	if err := HTML(&html, sweeps, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h3>Requests by name</h3>", "<th>request</th>", "<td>POST /post</td>", "<td>90.0µs</td>", "<td>200: 3330, 503: 10</td>"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html: no %s", want)
		}
	}
	// A run without a mix has none of it.
	plain := fixtureRun(t)
	txt.Reset()
	Wrk(&txt, plain[0].Steps[0].Run, WrkOptions{})
	md.Reset()
	Markdown(&md, plain, Options{})
	if strings.Contains(txt.String()+md.String(), "Requests by name") {
		t.Error("a run without a mix reports requests by name")
	}
}

// A mix on several hosts reports its figures by host too, each with its
// connections, in the text summary and Markdown.
func TestByHost(t *testing.T) {
	sweeps := mixRun(t)
	run := sweeps[0].Steps[0].Run
	ms := func(f float64) results.Duration { return results.Duration(f * float64(time.Millisecond)) }
	run.RequestsByHost = []results.NamedRequests{
		{Name: "http://127.0.0.1:8080", Weight: 5, WeightShare: 5.0 / 6, Share: 0.833, Requests: 8330, RPS: 833, Connections: 5,
			Status: map[int]int64{200: 8320, 503: 10}, Errors: results.Errors{Status: 10}, Latency: results.Latency{Count: 8330, P50: ms(1), P90: ms(2), P99: ms(3), Max: ms(9)}},
		{Name: "https://127.0.0.2:8443", Weight: 1, WeightShare: 1.0 / 6, Share: 0.167, Requests: 1660, RPS: 166, Connections: 1,
			Status: map[int]int64{200: 1660}, Errors: results.Errors{Connect: 3, Timeout: 10}, Latency: results.Latency{Count: 1670, P50: ms(20), P90: ms(30), P99: ms(2000), Max: ms(2000)}},
	}
	var txt bytes.Buffer
	if err := Wrk(&txt, run, WrkOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "  Requests by host (connections: of -c; errors: with its failed connects):\n" +
		"    host                              weight  share  requests   req/s     p50     p99                      errors  status\n" +
		"    http://127.0.0.1:8080 (5 conn)   5 (83%)  83.3%      8330  833.00  1.00ms  3.00ms              10 (status 10)  200: 8320, 503: 10\n" +
		"    https://127.0.0.2:8443 (1 conn)  1 (17%)  16.7%      1660  166.00  20.0ms   2.00s  13 (connect 3, timeout 10)  200: 1660\n"
	if !strings.Contains(txt.String(), want) {
		t.Errorf("text: no\n%s\nin\n%s", want, txt.String())
	}
	var md bytes.Buffer
	if err := Markdown(&md, sweeps, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| host | weight | share | requests | req/s | p50 | p90 | p99 | max | errors | status |\n|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|\n",
		"| https://127.0.0.2:8443 (1 conn) | 1 (16.7%) | 16.7% | 1660 | 166.00 | 20.0ms | 30.0ms | 2.00s | 2.00s | 13 (connect 3, timeout 10) | 200: 1660 |\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown: no\n%s\nin\n%s", want, md.String())
		}
	}
	// A mix on one host has no table by host.
	txt.Reset()
	Wrk(&txt, mixRun(t)[0].Steps[0].Run, WrkOptions{})
	if strings.Contains(txt.String(), "Requests by host") {
		t.Error("a mix on one host reports requests by host")
	}
}
