package report

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"loadgen/results"
	"loadgen/results/store"
)

// The fixtures are real runs: testdata/stages/run.json is `loadgen run -c
// 4 -t 2 -R '0-2k/2s,2k/2s'` against loadgen's httpbin, testdata/hosts/
// run.json a --targets mix of two names on two hosts (127.0.0.1 and
// 127.0.0.2, an httpbin each), and the streamed run is a step of the
// grpc-server-stream sweep testdata/messages.
func readRun(t *testing.T, path string) *results.Run {
	t.Helper()
	run, err := store.ReadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

var (
	messagesHTML = regexp.MustCompile(`(?s)<h3>Messages</h3>.*?</p>`)
	stagesHTML   = regexp.MustCompile(`(?s)<h3>Stages</h3>.*?</p>`)
	byHostHTML   = regexp.MustCompile(`(?s)<h3>Requests by host</h3>.*?</p>`)
	sweepTables  = regexp.MustCompile(`(?s)<div class="tablewrap"><table class="summary">\s*<thead>.*?</table></div>|<p class="note messages-note">.*?</p>`)
)

// A run's page has a table of what its summary holds beyond the figures
// of every run: a streamed run's messages, a staged schedule's stages, a
// mix's requests by host; a run without them has none of those tables.
// Markdown has the same tables.
func TestHTMLRunTables(t *testing.T) {
	streamed := readSweep(t, "testdata/messages").Steps[0].Run
	staged, hosts := readRun(t, "testdata/stages/run.json"), readRun(t, "testdata/hosts/run.json")
	if streamed.Summary.Messages == nil || len(staged.Summary.Stages) < 2 || len(hosts.RequestsByHost) < 2 {
		t.Fatal("the fixtures lack messages, stages or hosts")
	}
	pm := htmlOf(t, []*Sweep{SingleRun("stream.json", streamed)})
	ps := htmlOf(t, []*Sweep{SingleRun("stages.json", staged)})
	ph := htmlOf(t, []*Sweep{SingleRun("hosts.json", hosts)})
	got := fragments(pm, messagesHTML) + fragments(ps, stagesHTML) + fragments(ph, byHostHTML)
	golden(t, "reports/run-tables.html", []byte(got))

	m := streamed.Summary.Messages
	for _, want := range []string{
		"<td>" + micro(Latency(m.First.P50)) + "</td><td>" + micro(Latency(m.First.P90)) + "</td>",
		"<td>" + micro(Latency(m.Gap.P99)) + "</td><td>" + micro(Latency(m.Gap.Max)) + "</td>",
	} {
		if !strings.Contains(fragments(pm, messagesHTML), want) {
			t.Errorf("the messages table lacks %s:\n%s", want, fragments(pm, messagesHTML))
		}
	}
	for _, st := range staged.Summary.Stages {
		want := "<tr><td>" + st.Stage + "</td>"
		if !strings.Contains(fragments(ps, stagesHTML), want) {
			t.Errorf("the stages table lacks stage %s", st.Stage)
		}
	}
	for _, h := range hosts.RequestsByHost {
		if want := "<td>" + h.Name + " ("; !strings.Contains(fragments(ph, byHostHTML), want) {
			t.Errorf("the table by host lacks %s", h.Name)
		}
	}
	plain := htmlOf(t, fixtureRun(t))
	for _, re := range []*regexp.Regexp{messagesHTML, stagesHTML, byHostHTML} {
		if re.MatchString(plain) {
			t.Errorf("a plain run has %s", re.FindString(plain))
		}
	}
	for _, re := range []*regexp.Regexp{stagesHTML, byHostHTML} {
		if re.MatchString(pm) {
			t.Errorf("a streamed run has %s", re.FindString(pm))
		}
	}

	var md bytes.Buffer
	for _, run := range []*results.Run{streamed, staged} {
		if err := Markdown(&md, []*Sweep{SingleRun("run.json", run)}, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "run-tables.md", md.Bytes())
	for _, want := range []string{
		"| messages | msgs/s | first p50 |",
		"| " + i64(m.Count) + " | ",
		"| stage | from | asked/s |",
		"| " + staged.Summary.Stages[1].Stage + " | ",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	md.Reset()
	Markdown(&md, fixtureRun(t), Options{})
	if strings.Contains(md.String(), "Messages") || strings.Contains(md.String(), "Stages") {
		t.Errorf("a plain run's Markdown has messages or stages:\n%s", md.String())
	}
}

// A sweep whose answers were streams has the messages' figures in its
// HTML and Markdown tables, each step's medians; a sweep without has no
// such column.
func TestSweepMessages(t *testing.T) {
	streamed := readSweep(t, "testdata/messages")
	page := htmlOf(t, []*Sweep{streamed})
	tables := fragments(page, sweepTables)
	golden(t, "reports/sweep-messages.html", []byte(tables))
	var md bytes.Buffer
	if err := Markdown(&md, []*Sweep{streamed}, Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "messages.md", md.Bytes())
	if !strings.Contains(tables, `<th colspan="10" class="grouphead">messages</th>`) || !strings.Contains(tables, `messages-note`) {
		t.Errorf("no messages group in the HTML table:\n%s", tables)
	}
	for _, st := range streamed.Steps {
		m := st.Run.Summary.Messages
		rate := fmt.Sprintf("%.0f", m.PerSec)
		first := Latency(m.First.P50)
		if !strings.Contains(html.UnescapeString(tables), "<td>"+thousands(m.PerSec)+"</td><td>"+micro(first)+"</td>") {
			t.Errorf("step %s: no msgs/s %s then first p50 %s in the HTML table:\n%s", st.ID, rate, first, tables)
		}
		if !strings.Contains(md.String(), " | "+rate+" | "+first+" | ") {
			t.Errorf("step %s: no msgs/s %s then first p50 %s in Markdown:\n%s", st.ID, rate, first, md.String())
		}
	}
	plain := htmlOf(t, fixtureSweep(t))
	md.Reset()
	Markdown(&md, fixtureSweep(t), Options{Wide: true})
	if strings.Contains(plain, ">messages</th>") || strings.Contains(plain, "msgs/s") || strings.Contains(md.String(), "msgs/s") {
		t.Error("a sweep without streamed answers has message columns")
	}
}
