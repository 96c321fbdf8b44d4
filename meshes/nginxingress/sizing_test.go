//go:build linux

package nginxingress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"loadgen/targets/tlscert"
)

func TestSizingName(t *testing.T) {
	for _, c := range []struct {
		workers int
		tls     bool
		want    string
	}{{1, false, "nginx-w1"}, {1, true, "nginx-w1-tls"}, {16, false, "nginx-w16"}, {16, true, "nginx-w16-tls"}} {
		if got := SizingName(c.workers, c.tls); got != c.want {
			t.Errorf("SizingName(%d, %v) = %q, want %q", c.workers, c.tls, got, c.want)
		}
		if got := SizingIsTLS(c.want); got != c.tls {
			t.Errorf("SizingIsTLS(%q) = %v, want %v", c.want, got, c.tls)
		}
	}
}

// TestSizingPlan: per worker count, the plaintext nginx then the TLS one,
// named as StartSizing names them, which starts this plan.
func TestSizingPlan(t *testing.T) {
	for _, c := range []struct {
		workers []int
		want    []SizingProxy
	}{
		{nil, nil},
		{[]int{1}, []SizingProxy{{Name: "nginx-w1", Workers: 1}, {Name: "nginx-w1-tls", Workers: 1, TLS: true}}},
		{[]int{4, 2}, []SizingProxy{{Name: "nginx-w4", Workers: 4}, {Name: "nginx-w4-tls", Workers: 4, TLS: true},
			{Name: "nginx-w2", Workers: 2}, {Name: "nginx-w2-tls", Workers: 2, TLS: true}}},
	} {
		if got := SizingPlan(c.workers); !slices.Equal(got, c.want) {
			t.Errorf("SizingPlan(%v) = %+v, want %+v", c.workers, got, c.want)
		}
	}
}

// TestStartSizing starts a sizing's fixture with and without mutual TLS
// and sends through every nginx: the plaintext ones answer, the TLS ones
// with the sizing's CA file (and client certificate under MTLS), and under
// MTLS a client without the certificate is refused (400). Close removes the
// certificates.
func TestStartSizing(t *testing.T) {
	needNginx(t)
	up := startUpstream(t)
	for _, c := range []struct {
		name string
		mtls bool
		kt   tlscert.KeyType
	}{{"tls", false, tlscert.ECDSAP256}, {"mtls", true, tlscert.ECDSAP256}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sz, err := StartSizing(ctx, SizingConfig{Upstream: up.addr(), Workers: []int{1, 2}, KeyType: c.kt, MTLS: c.mtls})
			if err != nil {
				t.Fatal(err)
			}
			defer sz.Close()
			var names []string
			for _, px := range sz.Proxies {
				names = append(names, px.Name)
				if px.TLS != SizingIsTLS(px.Name) || px.PID <= 0 {
					t.Errorf("%+v: TLS or PID does not match its name", px)
				}
			}
			if want := []string{"nginx-w1", "nginx-w1-tls", "nginx-w2", "nginx-w2-tls"}; !slices.Equal(names, want) {
				t.Fatalf("proxies %v, want %v", names, want)
			}
			if (sz.ClientCert != "") != c.mtls || (sz.ClientKey != "") != c.mtls {
				t.Errorf("client certificate %q %q with mtls %v", sz.ClientCert, sz.ClientKey, c.mtls)
			}
			caPEM, err := os.ReadFile(sz.CACert)
			if err != nil {
				t.Fatal(err)
			}
			roots := x509.NewCertPool()
			if !roots.AppendCertsFromPEM(caPEM) {
				t.Fatalf("%s holds no certificate", sz.CACert)
			}
			var certs []tls.Certificate
			if c.mtls {
				cert, err := tls.LoadX509KeyPair(sz.ClientCert, sz.ClientKey)
				if err != nil {
					t.Fatal(err)
				}
				certs = []tls.Certificate{cert}
			}
			get := func(url string, certs []tls.Certificate) int {
				t.Helper()
				tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}
				defer tr.CloseIdleConnections()
				resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(url + "/size")
				if err != nil {
					t.Fatalf("%s: %v", url, err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			for _, px := range sz.Proxies {
				if code := get(px.URL, certs); code != 200 {
					t.Errorf("%s (%s): status %d, want 200", px.Name, px.URL, code)
				}
				if px.TLS && c.mtls {
					if code := get(px.URL, nil); code != 400 {
						t.Errorf("%s without a client certificate: status %d, want 400", px.Name, code)
					}
				}
			}
			dir := filepath.Dir(sz.CACert)
			if err := sz.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("after Close, %s: %v, want it gone", dir, err)
			}
		})
	}
}
