package nginxingress

import (
	"os"
	"path/filepath"
	"testing"
)

// Where nginx is on neither PATH nor its place outside it, the error is
// the one wording every command that needs nginx says (size, the demo, a
// study), as caddy's and haproxy's: where it was looked for, what to
// install. Found outside PATH, that place is nginx.
func TestAvailable(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	absent := filepath.Join(dir, "nginx")
	if _, err := available(absent); err == nil || err.Error() != "nginx not found on PATH or at "+absent+": apt-get install nginx" {
		t.Errorf("nginx nowhere: %v", err)
	}
	if err := os.WriteFile(absent, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := available(absent); err != nil || got != absent {
		t.Errorf("nginx at %s, off PATH: %q, %v", absent, got, err)
	}
}
