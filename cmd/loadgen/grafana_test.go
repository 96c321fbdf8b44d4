package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"loadgen/internal/promtest"
	"loadgen/internal/testport"
	"loadgen/loadgen/metrics"
)

// The Grafana dashboard of loadgen's --prometheus metrics
// (examples/grafana/loadgen.json) and what its tests read of it.
const grafanaDashboardFile = "../../examples/grafana/loadgen.json"

type grafanaDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaPanel struct {
	ID         int                `json:"id"`
	Type       string             `json:"type"`
	Title      string             `json:"title"`
	Datasource *grafanaDatasource `json:"datasource"`
	Targets    []struct {
		RefID      string             `json:"refId"`
		Expr       string             `json:"expr"`
		Instant    bool               `json:"instant"`
		Range      bool               `json:"range"`
		Datasource *grafanaDatasource `json:"datasource"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a row's
}

type grafanaVariable struct {
	Name       string             `json:"name"`
	Type       string             `json:"type"`
	Query      json.RawMessage    `json:"query"`
	Definition string             `json:"definition"`
	Datasource *grafanaDatasource `json:"datasource"`
	IncludeAll bool               `json:"includeAll"`
	AllValue   string             `json:"allValue"`
	Current    struct {
		Value any `json:"value"`
	} `json:"current"`
}

type grafanaDashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Requires []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"__requires"`
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []grafanaVariable `json:"list"`
	} `json:"templating"`
	Panels []grafanaPanel `json:"panels"`
}

// grafanaQuery is one PromQL query of the dashboard: a panel's target, or
// the series selector of a variable's label_values(SELECTOR, LABEL).
type grafanaQuery struct {
	where   string // panel "Title" refId, or variable NAME
	expr    string // as written, Grafana's variables in it
	instant bool   // Grafana asks it at the end of the time range only
	label   string // a variable's: the label whose values it lists
}

func readGrafanaDashboard(t *testing.T) grafanaDashboard {
	t.Helper()
	b, err := os.ReadFile(grafanaDashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", grafanaDashboardFile, err)
	}
	return d
}

func (d grafanaDashboard) allPanels() []grafanaPanel {
	var out []grafanaPanel
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

var labelValuesRE = regexp.MustCompile(`^\s*label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// queries lists every PromQL query the dashboard asks: its panels' and its
// query variables'.
func (d grafanaDashboard) queries(t *testing.T) []grafanaQuery {
	t.Helper()
	var qs []grafanaQuery
	for _, p := range d.allPanels() {
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q target %s has no expression", p.Title, tg.RefID)
				continue
			}
			qs = append(qs, grafanaQuery{where: fmt.Sprintf("panel %q %s", p.Title, tg.RefID), expr: tg.Expr, instant: tg.Instant && !tg.Range})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// The query: an object (Grafana ≥ 10) or a string (before).
		var obj struct {
			Query string `json:"query"`
		}
		var str string
		def := v.Definition
		if json.Unmarshal(v.Query, &obj) == nil && obj.Query != "" {
			def = obj.Query
		} else if json.Unmarshal(v.Query, &str) == nil && str != "" {
			def = str
		}
		m := labelValuesRE.FindStringSubmatch(def)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(SELECTOR, LABEL)", v.Name, def)
			continue
		}
		qs = append(qs, grafanaQuery{where: "variable " + v.Name, expr: m[1], label: m[2]})
	}
	return qs
}

var grafanaVarRE = regexp.MustCompile(`\$\{([a-zA-Z0-9_]+)\}|\$([a-zA-Z0-9_]+)|\[\[([a-zA-Z0-9_]+)\]\]`)

// expand substitutes Grafana's variables in expr as Grafana would with
// every template variable at All and a time range of rng scraped every
// second: $__rate_interval is four scrape intervals, $__interval one.
func (d grafanaDashboard) expand(expr string, rng time.Duration) (string, error) {
	values := map[string]string{
		"__rate_interval": "4s",
		"__interval":      "1s",
		"__range":         fmt.Sprintf("%ds", int(math.Ceil(rng.Seconds()))),
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			if !v.IncludeAll || v.AllValue == "" {
				return "", fmt.Errorf("variable %s has no All value for the test to use", v.Name)
			}
			values[v.Name] = v.AllValue
		}
	}
	var unknown []string
	out := grafanaVarRE.ReplaceAllStringFunc(expr, func(m string) string {
		sm := grafanaVarRE.FindStringSubmatch(m)
		name := sm[1] + sm[2] + sm[3]
		if v, ok := values[name]; ok {
			return v
		}
		unknown = append(unknown, m)
		return m
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("%s: no such variable", strings.Join(unknown, ", "))
	}
	return out, nil
}

// grafanaBuiltinPanels are the panel types Grafana ships: the dashboard
// needs no plugin.
var grafanaBuiltinPanels = []string{"timeseries", "stat", "gauge", "bargauge", "table", "state-timeline", "status-history", "text", "row", "barchart", "histogram", "heatmap", "piechart"}

// The dashboard imports into any Grafana: a Prometheus data source asked
// for on import (DS_PROMETHEUS) and chosen by a variable, built-in panels
// only, and every metric it asks for is one loadgen serves; it shows every
// metric of loadgen's own.
func TestGrafanaDashboardModel(t *testing.T) {
	d := readGrafanaDashboard(t)
	if d.SchemaVersion < 39 || d.UID == "" || d.Title == "" {
		t.Errorf("schemaVersion %d, uid %q, title %q: want a current Grafana's schema (≥ 39), a uid and a title", d.SchemaVersion, d.UID, d.Title)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("__inputs %+v: want one, DS_PROMETHEUS, a prometheus datasource", d.Inputs)
	}
	for _, r := range d.Requires {
		if r.Type == "panel" && !slices.Contains(grafanaBuiltinPanels, r.ID) || r.Type == "datasource" && r.ID != "prometheus" {
			t.Errorf("__requires %s %s: not built into Grafana", r.Type, r.ID)
		}
	}
	// The data source variable, set from the import's input.
	var dsVar string
	for _, v := range d.Templating.List {
		if v.Type == "datasource" {
			dsVar = v.Name
			if v.Current.Value != "${DS_PROMETHEUS}" {
				t.Errorf("variable %s defaults to %v, want ${DS_PROMETHEUS}", v.Name, v.Current.Value)
			}
		}
	}
	if dsVar == "" {
		t.Fatal("no datasource variable")
	}
	wantDS := grafanaDatasource{Type: "prometheus", UID: "${" + dsVar + "}"}
	checkDS := func(where string, ds *grafanaDatasource) {
		if ds == nil || *ds != wantDS {
			t.Errorf("%s: datasource %+v, want %+v", where, ds, wantDS)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			checkDS("variable "+v.Name, v.Datasource)
		}
	}
	ids := map[int]bool{}
	for _, p := range d.allPanels() {
		if !slices.Contains(grafanaBuiltinPanels, p.Type) {
			t.Errorf("panel %q: type %q is a plugin", p.Title, p.Type)
		}
		if ids[p.ID] {
			t.Errorf("panel %q: id %d twice", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		checkDS(fmt.Sprintf("panel %q", p.Title), p.Datasource)
		for _, tg := range p.Targets {
			checkDS(fmt.Sprintf("panel %q %s", p.Title, tg.RefID), tg.Datasource)
		}
	}

	// What an exporter serves with no load yet: Go's and the process's
	// collectors; loadgen's own appear with the first progress.
	srv := httptest.NewServer(metrics.New(nil).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			served[f[2]] = true
		}
	}
	resp.Body.Close()
	for _, n := range metrics.Names() {
		served[n] = true
	}
	metricRE := regexp.MustCompile(`\b(loadgen|process|go)_[a-z0-9_]+`)
	used := map[string]bool{}
	for _, q := range d.queries(t) {
		if _, err := d.expand(q.expr, time.Hour); err != nil {
			t.Errorf("%s: %v", q.where, err)
		}
		for _, m := range metricRE.FindAllString(q.expr, -1) {
			base := m
			for _, suf := range []string{"_bucket", "_count", "_sum"} {
				if b, ok := strings.CutSuffix(m, suf); ok && served[b] {
					base = b
				}
			}
			if !served[base] {
				t.Errorf("%s asks for %s, which loadgen does not serve", q.where, m)
			}
			used[base] = true
		}
	}
	for _, n := range metrics.Names() {
		if !used[n] {
			t.Errorf("the dashboard does not show %s", n)
		}
	}
}

// needTool finds a Prometheus binary; under CI its absence fails the test.
func needTool(t *testing.T, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (apt-get install prometheus); CI installs it", name)
		}
		t.Skipf("%s is not installed (apt-get install prometheus)", name)
	}
	return bin
}

// Every query of the dashboard, its variables substituted as Grafana does,
// is PromQL that Prometheus parses: promtool checks them as the recording
// rules of a rule file.
func TestGrafanaDashboardPromQL(t *testing.T) {
	promtool := needTool(t, "promtool")
	d := readGrafanaDashboard(t)
	qs := d.queries(t)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: grafana_dashboard\n    rules:\n")
	names := map[string]string{}
	for i, q := range qs {
		expr, err := d.expand(q.expr, 15*time.Minute)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		name := fmt.Sprintf("dashboard_query_%d", i)
		names[name] = q.where + ": " + expr
		b, _ := json.Marshal(expr) // a JSON string is a YAML string
		fmt.Fprintf(&rules, "      - record: %s\n        expr: %s\n", name, b)
	}
	if len(qs) < 10 {
		t.Fatalf("%d queries in the dashboard", len(qs))
	}
	file := filepath.Join(t.TempDir(), "dashboard.rules.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
	if err != nil {
		var list []string
		for n, w := range names {
			list = append(list, n+" = "+w)
		}
		slices.Sort(list)
		t.Fatalf("promtool check rules: %v\n%s\nthe rules:\n%s", err, out, strings.Join(list, "\n"))
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d rules found", len(names))) {
		t.Errorf("promtool found other than %d rules:\n%s", len(names), out)
	}
}

// Every query of the dashboard answers with data about real runs: a
// `loadgen run --prometheus` at an open-loop rate against `loadgen serve
// httpbin`, whose target is killed a few seconds in (so the errors have a
// class), and a one-step `loadgen sweep --prometheus` (so steps and paths
// have names), each its own process, scraped every second by a real
// Prometheus. The queries are asked as Grafana asks them: the panels' over
// the time range, the tables' at its end, the variables' for label values.
func TestGrafanaDashboardLive(t *testing.T) {
	needTool(t, "prometheus") // before any process starts
	d := readGrafanaDashboard(t)
	qs := d.queries(t)
	runTarget, sweepTarget := testport.Held(t), testport.Held(t)
	target, _, _ := cliProcess(t, "serve", "httpbin", "--addr", runTarget, "--for", "1m")
	cliProcess(t, "serve", "httpbin", "--addr", sweepTarget, "--for", "1m")
	for _, a := range []string{runTarget, sweepTarget} {
		waitHTTPOK(t, "http://"+a+"/healthz")
	}
	runMetrics, sweepMetrics := testport.Held(t), testport.Held(t)
	prom := promtest.Start(t, runMetrics, sweepMetrics)
	// Prometheus applies its targets a few seconds after it starts: the
	// commands start once it has tried to scrape them.
	tried := fmt.Sprintf("count(up{instance=~%q})", runMetrics+"|"+sweepMetrics)
	waitProm(t, prom, tried, 2, 15*time.Second)

	start := time.Now().Add(-time.Second)
	run, runOut, runErr := cliProcess(t, "run", "-q", "-R", "200", "-c", "4", "-d", "8s",
		"--prometheus", runMetrics, "--prometheus-hold", "3s", "http://"+runTarget+"/get")
	sweep, _, sweepErr := cliProcess(t, "sweep", "-q", "--path", "baseline=http://"+sweepTarget,
		"--ladder", "c1t1", "--payloads", "100", "-R", "100", "-d", "3s", "-o", filepath.Join(t.TempDir(), "sweep"),
		"--prometheus", sweepMetrics, "--prometheus-hold", "3s")

	// The run's target dies once Prometheus has two scrapes of its
	// answers: the rest of the run fails to connect.
	waitProm(t, prom, fmt.Sprintf("count_over_time(loadgen_requests_total{instance=%q}[1m])", runMetrics), 2, 10*time.Second)
	if err := target.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*exec.Cmd{"run": run, "sweep": sweep} {
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if name == "sweep" && err != nil {
				t.Errorf("sweep: %v: %s", err, sweepErr)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s still running after 20 s", name)
		}
	}
	// The last scrape of the final figures may still be on its way into
	// storage when the commands have exited.
	final := `last_over_time(loadgen_errors_total{class="connect"}[5m])`
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, ok := promtest.Query(t, prom, final); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connect errors of the run in Prometheus; the run said:\n%s%s", runOut, runErr)
		}
	}
	end := time.Now()

	for _, q := range qs {
		expr, err := d.expand(q.expr, end.Sub(start))
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		params := url.Values{}
		var api string
		switch {
		case q.label != "":
			// What Grafana asks for label_values(SELECTOR, LABEL).
			api = "/api/v1/label/" + q.label + "/values"
			params.Set("match[]", expr)
			params.Set("start", unixString(start))
			params.Set("end", unixString(end))
		case q.instant:
			api = "/api/v1/query"
			params.Set("query", expr)
			params.Set("time", unixString(end))
		default:
			api = "/api/v1/query_range"
			params.Set("query", expr)
			params.Set("start", unixString(start))
			params.Set("end", unixString(end))
			params.Set("step", "1")
		}
		n, err := promAnswers(prom+api, params)
		if err != nil {
			t.Errorf("%s: %s: %v", q.where, expr, err)
		} else if n == 0 {
			t.Errorf("%s: no data: %s", q.where, expr)
		}
	}
}

func unixString(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// promAnswers asks Prometheus's HTTP API and counts what it answered: the
// samples that are numbers (not NaN) of a query, the values of a label.
func promAnswers(u string, params url.Values) (int, error) {
	resp, err := http.Get(u + "?" + params.Encode())
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnprocessableEntity {
		return 0, fmt.Errorf("HTTP %s", resp.Status)
	}
	var r struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s: %s", r.Status, r.Error)
	}
	var labels []string
	if json.Unmarshal(r.Data, &labels) == nil {
		return len(labels), nil
	}
	var q struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Value  []any   `json:"value"`
			Values [][]any `json:"values"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Data, &q); err != nil {
		return 0, err
	}
	n := 0
	for _, s := range q.Result {
		points := s.Values
		if s.Value != nil {
			points = append(points, s.Value)
		}
		for _, p := range points {
			if len(p) != 2 {
				continue
			}
			if v, err := strconv.ParseFloat(fmt.Sprint(p[1]), 64); err == nil && !math.IsNaN(v) {
				n++
			}
		}
	}
	return n, nil
}

// waitProm waits until Prometheus answers q with at least want.
func waitProm(t *testing.T, prom, q string, want float64, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		if n, ok := promtest.Query(t, prom, q); ok && n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not %v after %v", q, want, wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitHTTPOK waits up to 10 s for u to answer 200.
func waitHTTPOK(t *testing.T, u string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not up after 10 s: %v", u, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
