package compare

import (
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"loadgen/results"
)

// Suite is one <testsuite> of a JUnit report: a run or a sweep.
type Suite struct {
	Name  string        // "loadgen run http://…", "loadgen sweep results/istio"
	Time  time.Duration // measured time of the run(s)
	Cases []Case
	// Properties are the suite's <properties>: the run's labels (--label),
	// or those every step of a sweep shares.
	Properties results.Labels
}

// Case is one <testcase>: an assertion on a run or a sweep step, or a
// figure compared with a baseline.
type Case struct {
	Class   string // classname: the step ID, or the run's target
	Name    string // the assertion: p99<20ms
	Failure string // the failure message; empty when the case passed
	Error   string // why the case could not be judged (no run, no such watch)
	Skipped string // why the case does not apply
	Output  string // <system-out>: what was measured
}

// AssertCase is the test case of one judged assertion.
func AssertCase(class string, r Result) Case {
	c := Case{Class: class, Name: r.Expr, Output: r.Message()}
	switch {
	case r.Skipped != "":
		c.Skipped = r.Skipped
	case r.Err != "":
		c.Error = r.Message()
	case !r.Pass:
		c.Failure = r.Message()
	}
	return c
}

// RunCase is the test case of the run (or sweep step) itself, named
// "run": it fails with why the run failed (no request succeeded, more
// failed than --max-errors allows, the target stopped answering, nothing
// could be sent), so that a CI report shows a failed run even where every
// assertion held or none was asked.
func RunCase(class, failed string) Case {
	c := Case{Class: class, Name: "run", Output: "the run ended as it should"}
	if failed != "" {
		c.Failure, c.Output = failed, failed
	}
	return c
}

// RowCase is the test case of one figure compared with a baseline: it
// fails when the figure regressed, and is skipped, saying why, when it
// is not decidable: worse than the limit within what contention explains.
func RowCase(r Row) Case {
	c := Case{Class: r.Step, Name: r.Metric + " vs baseline", Output: r.Message()}
	switch r.Verdict {
	case Regression:
		c.Failure = r.Message()
	case Contended:
		c.Skipped = "not decidable: worse than the regression limit, but within what contention for CPU (" + r.Contended +
			") can explain: " + r.Margin + "; exit status 98 unless --allow-contended"
	}
	return c
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
	// Properties come first, as JUnit's schema (and Surefire) has them.
	Properties *junitProperties `xml:"properties,omitempty"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitProblem `xml:"failure,omitempty"`
	Error   *junitProblem `xml:"error,omitempty"`
	Skipped *junitSkipped `xml:"skipped,omitempty"`
	Output  string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the suites as a JUnit XML report, as CI systems read
// them: one <testsuite> per suite, one <testcase> per case.
func WriteJUnit(w io.Writer, suites []Suite) error {
	doc := junitSuites{Suites: make([]junitSuite, 0, len(suites))}
	for _, s := range suites {
		js := junitSuite{Name: s.Name, Time: seconds(s.Time), Cases: make([]junitCase, 0, len(s.Cases))}
		if len(s.Properties) > 0 {
			js.Properties = &junitProperties{}
			for _, k := range s.Properties.Keys() {
				js.Properties.Property = append(js.Properties.Property, junitProperty{Name: k, Value: s.Properties[k]})
			}
		}
		for _, c := range s.Cases {
			jc := junitCase{Class: c.Class, Name: c.Name, Time: "0", Output: c.Output}
			switch {
			case c.Skipped != "":
				jc.Skipped = &junitSkipped{Message: c.Skipped}
				js.Skipped++
			case c.Error != "":
				jc.Error = &junitProblem{Message: c.Error, Type: "error", Text: c.Error}
				js.Errors++
			case c.Failure != "":
				jc.Failure = &junitProblem{Message: c.Failure, Type: "assertion", Text: c.Failure}
				js.Failures++
			}
			js.Cases = append(js.Cases, jc)
		}
		js.Tests = len(js.Cases)
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Errors += js.Errors
		doc.Suites = append(doc.Suites, js)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// JUnitFile is the JUnit report of one part, name, of a command that
// writes one per part (a lab's protocol, a study's step) where it was
// given one file: junit.xml → junit-NAME.xml.
func JUnitFile(junit, name string) string {
	ext := filepath.Ext(junit)
	return strings.TrimSuffix(junit, ext) + "-" + name + ext
}

// JUnitNotStdout is the refusal of --junit - (standard output, given as
// junit) by a command that writes several reports, why saying which (a
// study's per step): they need a file name, which JUnitFile names per part.
func JUnitNotStdout(junit, why string) error {
	return fmt.Errorf("--junit %s: %s: give a file name", junit, why)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
