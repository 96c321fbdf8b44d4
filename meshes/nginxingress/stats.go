package nginxingress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"loadgen/meshes/proxyproc"
)

// Requests is the HTTP requests nginx handled on the inbound and outbound
// listeners of the sidecar layout, by nginx's own counter (stub_status on
// the admin listener). stub_status counts its own requests too: the ones
// Requests made are taken off.
func (p *Proxy) Requests() (uint64, error) {
	if p.cfg.Sidecar == nil {
		return 0, errors.New("nginxingress: requests are counted in the sidecar layout only")
	}
	p.statusReads.Add(1)
	ns := p.cfg.NetNS
	client := &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return proxyproc.DialContext(ctx, ns, addr)
		}},
	}
	resp, err := client.Get("http://" + p.cfg.Sidecar.Admin.String() + "/stats")
	if err != nil {
		return 0, fmt.Errorf("nginxingress: stub_status: %w", err)
	}
	defer resp.Body.Close()
	n, err := parseStubStatus(resp.Body)
	if err != nil {
		return 0, err
	}
	if reads := p.statusReads.Load(); n >= reads {
		return n - reads, nil
	}
	return 0, fmt.Errorf("nginxingress: stub_status counts %d requests, fewer than the %d it answered", n, p.statusReads.Load())
}

// parseStubStatus reads the requests total of stub_status's answer:
//
//	Active connections: 1
//	server accepts handled requests
//	 7 7 12
//	Reading: 0 Writing: 1 Waiting: 0
func parseStubStatus(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "server accepts handled requests" {
			continue
		}
		if !sc.Scan() {
			break
		}
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			break
		}
		n, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			break
		}
		return n, nil
	}
	return 0, errors.New("nginxingress: stub_status: no \"server accepts handled requests\" line with three numbers")
}
