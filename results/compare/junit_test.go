package compare

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

// junitDoc is how CI systems read the report.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Time     string `xml:"time,attr"`
		Cases    []struct {
			Class   string `xml:"classname,attr"`
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Out string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, b []byte) junitDoc {
	t.Helper()
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not valid JUnit XML: %v\n%s", err, b)
	}
	return doc
}

func TestWriteJUnit(t *testing.T) {
	run := sampleRun()
	var cases []Case
	for _, e := range []string{"p99<20ms", "errors<1%", "cpu.envoy<1"} {
		a, err := Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, AssertCase(run.Config.Target, a.Eval(run, sampleWatched)))
	}
	// Names that need escaping, and a character XML cannot hold.
	a, _ := Parse(`mem.a&b"c'd<1MiB`)
	cases = append(cases, AssertCase("step\x00<&>", a.Eval(run, nil)))
	suites := []Suite{
		{Name: "loadgen run " + run.Config.Target, Time: 10 * time.Second, Cases: cases},
		{Name: "loadgen sweep results/x", Cases: []Case{{Class: "baseline_c1t1_100B_closed_r1", Name: "p99<10ms"}}},
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, suites); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "<?xml") {
		t.Errorf("no XML header:\n%s", b.String())
	}
	doc := parseJUnit(t, b.Bytes())
	if doc.Tests != 5 || doc.Failures != 1 || doc.Errors != 2 || len(doc.Suites) != 2 {
		t.Fatalf("tests %d failures %d errors %d suites %d, want 5 1 2 2\n%s", doc.Tests, doc.Failures, doc.Errors, len(doc.Suites), b.String())
	}
	s := doc.Suites[0]
	if s.Name != "loadgen run http://127.0.0.1:8080/get" || s.Tests != 4 || s.Failures != 1 || s.Errors != 2 || s.Time != "10.000" {
		t.Errorf("suite %+v", s)
	}
	c := s.Cases[0]
	if c.Class != run.Config.Target || c.Name != "p99<20ms" || c.Failure == nil || c.Failure.Message != "p99 23.4ms is not < 20ms" {
		t.Errorf("failed case: %+v", c)
	}
	if c := s.Cases[1]; c.Failure != nil || c.Error != nil || c.Name != "errors<1%" || !strings.Contains(c.Out, "0.2%") {
		t.Errorf("passing case: %+v", c)
	}
	if c := s.Cases[2]; c.Error == nil || !strings.Contains(c.Error.Message, `no process "envoy"`) {
		t.Errorf("case that cannot be judged: %+v", c)
	}
	if c := s.Cases[3]; c.Name != `mem.a&b"c'd<1MiB` || c.Class != "step\uFFFD<&>" {
		t.Errorf("escaped names read back as %q / %q", c.Class, c.Name)
	}
	if c := doc.Suites[1].Cases[0]; c.Class != "baseline_c1t1_100B_closed_r1" || c.Failure != nil {
		t.Errorf("second suite: %+v", c)
	}
}

func TestWriteJUnitEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, nil); err != nil {
		t.Fatal(err)
	}
	if doc := parseJUnit(t, b.Bytes()); doc.Tests != 0 || len(doc.Suites) != 0 {
		t.Errorf("%+v", doc)
	}
}

func TestRowCase(t *testing.T) {
	c := RowCase(Row{Step: "x", Metric: "p99", A: Stat{N: 1, Median: 1e6}, B: Stat{N: 1, Median: 1.3e6}, Ratio: 1.3, Verdict: Regression})
	if c.Failure != "x p99: 1ms → 1.3ms (×1.30, REGRESSION)" || c.Name != "p99 vs baseline" {
		t.Errorf("%+v", c)
	}
	if c := RowCase(Row{Step: "x", Metric: "p99", Verdict: Worse}); c.Failure != "" {
		t.Errorf("worse within the limit fails: %+v", c)
	}
}

func TestWriteJUnitSkipped(t *testing.T) {
	a, _ := Parse("cpu.nginx<1")
	r := a.Eval(sampleRun(), nil)
	r.Skipped = "nginx is not watched on path baseline"
	var b bytes.Buffer
	if err := WriteJUnit(&b, []Suite{{Name: "s", Cases: []Case{AssertCase("baseline_c1t1_100B_closed_r1", r)}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<skipped message="nginx is not watched on path baseline"></skipped>`) ||
		!strings.Contains(b.String(), `skipped="1"`) {
		t.Errorf("no skipped case:\n%s", b.String())
	}
	if doc := parseJUnit(t, b.Bytes()); doc.Failures != 0 || doc.Errors != 0 || doc.Tests != 1 {
		t.Errorf("%+v", doc)
	}
}

// TestJUnitPropertiesAreTheLabels checks that a run's labels are its suite's
// <properties>, before its test cases, as CI systems read them; a
// sweep's are those every step shares.
func TestJUnitPropertiesAreTheLabels(t *testing.T) {
	run := sampleRun()
	run.Labels = results.Labels{"mesh": "istio", "note": `a "b" & <c>`}
	var c Check
	var b bytes.Buffer
	if err := WriteJUnit(&b, []Suite{c.Run(run, "").Suite}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	s := doc.Suites[0]
	got := results.Labels{}
	for _, p := range s.Props {
		got[p.Name] = p.Value
	}
	if !got.Equal(run.Labels) {
		t.Errorf("properties %v, want %v:\n%s", got, run.Labels, b.String())
	}
	if p, c := strings.Index(b.String(), "<properties>"), strings.Index(b.String(), "<testcase"); p < 0 || p > c {
		t.Errorf("properties not before the test cases:\n%s", b.String())
	}
	// A sweep: the labels every step's run carries alike.
	other := sampleRun()
	other.Labels = results.Labels{"mesh": "istio", "note": "other"}
	steps := []*results.Step{{ID: "a", Run: run}, {ID: "b", Run: other}, {ID: "c", Failed: "no run"}}
	if p := c.Steps(steps).Suite.Properties; !p.Equal(results.Labels{"mesh": "istio"}) {
		t.Errorf("sweep properties %v, want mesh=istio alone", p)
	}
}

// One part's JUnit file: the part's name before the extension, if any, of
// the file's name (not of a directory's).
func TestJUnitFile(t *testing.T) {
	for _, tc := range []struct{ junit, name, want string }{
		{"junit.xml", "tcp-rr", "junit-tcp-rr.xml"},
		{"out/report.xml", "h2", "out/report-h2.xml"},
		{"junit", "h2", "junit-h2"},
		{"ci.d/junit", "h2", "ci.d/junit-h2"},
		{"junit.v2.xml", "udp", "junit.v2-udp.xml"},
		{"/tmp/j.xml", "istio-1", "/tmp/j-istio-1.xml"},
	} {
		if got := JUnitFile(tc.junit, tc.name); got != tc.want {
			t.Errorf("JUnitFile(%q, %q) = %q, want %q", tc.junit, tc.name, got, tc.want)
		}
	}
}

// Several reports cannot go to standard output: the refusal says why and
// what to give, in the words of every command that refuses it.
func TestJUnitNotStdout(t *testing.T) {
	for _, tc := range []struct{ junit, why, want string }{
		{"-", "this command writes several reports", "--junit -: this command writes several reports: give a file name"},
		{"/dev/stdout", "the study writes a JUnit file per step (FILE-STEP-PROTOCOL.xml)",
			"--junit /dev/stdout: the study writes a JUnit file per step (FILE-STEP-PROTOCOL.xml): give a file name"},
	} {
		if got := JUnitNotStdout(tc.junit, tc.why).Error(); got != tc.want {
			t.Errorf("JUnitNotStdout(%q, %q) = %q, want %q", tc.junit, tc.why, got, tc.want)
		}
	}
}
