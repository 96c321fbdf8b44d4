package k8s

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A path's cert and key files are read as named; a cert file that holds
// the key is both; a missing file is named by which it is.
func TestReadClientCert(t *testing.T) {
	dir := t.TempDir()
	crt, key, both := filepath.Join(dir, "c.crt"), filepath.Join(dir, "c.key"), filepath.Join(dir, "both.pem")
	for p, data := range map[string]string{crt: "CERT", key: "KEY", both: "CERT+KEY"} {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, cert, key   string
		wantCert, wantKey string
		err               string
	}{
		{"a pair", crt, key, "CERT", "KEY", ""},
		{"one file", both, "", "CERT+KEY", "CERT+KEY", ""},
		{"no cert", filepath.Join(dir, "none"), key, "", "", "cert: "},
		{"no key", crt, filepath.Join(dir, "none"), "CERT", "", "key: "},
	} {
		c, err := ReadClientCert("path0", tc.cert, tc.key)
		if c.Name != "path0" || string(c.Cert) != tc.wantCert || string(c.Key) != tc.wantKey || (err == nil) != (tc.err == "") ||
			(err != nil && !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("%s: %+v, %v; want %q, %q, %q", tc.name, c, err, tc.wantCert, tc.wantKey, tc.err)
		}
	}
}
