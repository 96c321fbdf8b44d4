package haproxy

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Stats are haproxy's own counters, read from its stats socket.
type Stats struct {
	// Requests is the HTTP requests the inbound and outbound frontends
	// answered: the sum of their hrsp_1xx … hrsp_5xx. (req_tot also counts
	// connections that closed before sending one, such as Start's
	// readiness checks.)
	Requests uint64
	// SSLConns is the TLS connections haproxy accepted or made
	// (CumSslConns): with mTLS, one per handshake.
	SSLConns uint64
}

// Stats reads the counters from the stats socket in the run directory.
func (p *Proxy) Stats() (Stats, error) {
	stat, err := p.command("show stat")
	if err != nil {
		return Stats{}, err
	}
	reqs, err := parseRequests(stat)
	if err != nil {
		return Stats{}, err
	}
	info, err := p.command("show info")
	if err != nil {
		return Stats{}, err
	}
	ssl, err := infoValue(info, "CumSslConns")
	if err != nil {
		return Stats{}, err
	}
	return Stats{Requests: reqs, SSLConns: ssl}, nil
}

// command sends one command to the stats socket and reads the answer.
func (p *Proxy) command(cmd string) (string, error) {
	c, err := net.DialTimeout("unix", filepath.Join(p.cfg.Dir, adminSocket), 2*time.Second)
	if err != nil {
		return "", fmt.Errorf("haproxy: stats socket: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return "", fmt.Errorf("haproxy: stats socket: %w", err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		return "", fmt.Errorf("haproxy: stats socket: %w", err)
	}
	return string(b), nil
}

// responseCols are the columns of `show stat` that count answers.
var responseCols = []string{"hrsp_1xx", "hrsp_2xx", "hrsp_3xx", "hrsp_4xx", "hrsp_5xx"}

// parseRequests sums the responses of the inbound and outbound FRONTEND
// rows of `show stat` (CSV under a "# pxname,svname,..." header).
func parseRequests(stat string) (uint64, error) {
	header, body, ok := strings.Cut(strings.TrimPrefix(stat, "# "), "\n")
	if !ok {
		return 0, fmt.Errorf("haproxy: show stat: no header line")
	}
	cols := strings.Split(header, ",")
	px, sv := index(cols, "pxname"), index(cols, "svname")
	var resp []int
	for _, name := range responseCols {
		resp = append(resp, index(cols, name))
	}
	if px < 0 || sv < 0 || slices.Contains(resp, -1) {
		return 0, fmt.Errorf("haproxy: show stat: header lacks pxname, svname or %s", strings.Join(responseCols, ", "))
	}
	r := csv.NewReader(strings.NewReader(body))
	r.FieldsPerRecord = -1
	var total uint64
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return 0, fmt.Errorf("haproxy: show stat: %w", err)
		}
		if len(rec) <= max(px, sv, slices.Max(resp)) || rec[sv] != "FRONTEND" || (rec[px] != "inbound" && rec[px] != "outbound") {
			continue
		}
		for i, col := range resp {
			n, err := strconv.ParseUint(rec[col], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("haproxy: show stat: %s %s %q", rec[px], responseCols[i], rec[col])
			}
			total += n
		}
	}
}

func index(cols []string, name string) int {
	for i, c := range cols {
		if c == name {
			return i
		}
	}
	return -1
}

// infoValue is the number of "Name: value" in `show info`.
func infoValue(info, name string) (uint64, error) {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+": "); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("haproxy: show info: %s %q", name, v)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("haproxy: show info has no %s", name)
}

// oneLine joins haproxy's non-blank output lines with "; ".
func oneLine(b []byte) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// Requests is Stats().Requests.
func (p *Proxy) Requests() (uint64, error) {
	s, err := p.Stats()
	return s.Requests, err
}
