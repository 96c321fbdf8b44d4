package caddy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Requests is the HTTP requests the inbound and outbound servers handled:
// with Metrics, Caddy's own counter (caddy_http_requests_total on the
// admin listener's /metrics); with AccessLog, the lines of the access log.
// Caddy 2.6 counts nothing unless one of them is on.
func (p *Proxy) Requests() (uint64, error) {
	if p.cfg.Metrics {
		return p.metricsRequests()
	}
	if !p.cfg.AccessLog {
		return 0, errors.New("caddy: requests are counted by its metrics or its access log: start caddy with Metrics or AccessLog")
	}
	f, err := os.Open(filepath.Join(p.cfg.Dir, accessLog))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // caddy opens it at the first request
	}
	if err != nil {
		return 0, fmt.Errorf("caddy: %w", err)
	}
	defer f.Close()
	return countAccess(f)
}

// countAccess counts the access log's entries ({"logger":
// "http.log.access.…", …} per line). A last line still being written is
// not counted.
func countAccess(r io.Reader) (uint64, error) {
	var n uint64
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("caddy: access log: %w", err)
		}
		var entry struct {
			Logger string `json:"logger"`
		}
		if err := json.Unmarshal(line, &entry); err != nil {
			return n, fmt.Errorf("caddy: access log line %d: %w", n+1, err)
		}
		if bytes.HasPrefix([]byte(entry.Logger), []byte("http.log.access")) {
			n++
		}
	}
}

// metricsRequests reads the counter on the admin listener.
func (p *Proxy) metricsRequests() (uint64, error) {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + p.cfg.Sidecar.Admin.String() + MetricsPath)
	if err != nil {
		return 0, fmt.Errorf("caddy: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("caddy: %s: %s", MetricsPath, resp.Status)
	}
	n, err := MetricsRequests(resp.Body)
	return uint64(n), err
}

// MetricsPath is where Caddy's admin listener serves its metrics.
const MetricsPath = "/metrics"

// requestsMetric is Caddy's counter of the requests each handler of each
// server handled.
const requestsMetric = "caddy_http_requests_total"

// MetricsRequests is the requests the sidecar's inbound and outbound
// servers handled, from Caddy's Prometheus text (Config.Metrics): the sum
// of caddy_http_requests_total over those two servers' reverse_proxy
// handler, each server's only one (a request is counted once per handler
// it passes). The admin API's own requests are another metric
// (caddy_admin_http_requests_total): a read does not count itself. Caddy
// makes a server's series at its first request, so none yet is 0.
func MetricsRequests(r io.Reader) (int64, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return 0, fmt.Errorf("caddy metrics: %w", err)
	}
	if len(families) == 0 {
		return 0, errors.New("caddy metrics: no metric at all")
	}
	f := families[requestsMetric]
	if f == nil {
		return 0, nil
	}
	var total int64
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if s := labels["server"]; (s != "inbound" && s != "outbound") || labels["handler"] != "reverse_proxy" {
			continue
		}
		v := m.GetCounter().GetValue()
		if m.GetCounter() == nil || v < 0 || v != math.Trunc(v) {
			return 0, fmt.Errorf("caddy metrics: %s{%s} is %v, not a count", requestsMetric, labelText(labels), v)
		}
		total += int64(v)
	}
	return total, nil
}

func labelText(labels map[string]string) string {
	var s []string
	for k, v := range labels {
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}
