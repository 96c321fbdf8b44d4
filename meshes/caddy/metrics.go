package caddy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Requests is the HTTP requests the inbound and outbound servers handled:
// the lines of the access log (Caddy 2.6 has no request counter; its
// /metrics has Go's runtime only). It needs AccessLog.
func (p *Proxy) Requests() (uint64, error) {
	if !p.cfg.AccessLog {
		return 0, errors.New("caddy: requests are counted from the access log: start caddy with AccessLog")
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
