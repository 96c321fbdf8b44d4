package proxyproc

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"

	"loadgen/meshes/leftover"
)

// Find returns the proxy executable: bin if set (a path or a name on
// PATH), else name on PATH, else fallback (where the Debian package puts
// it, outside some users' PATH). The error says what to install: install
// is the Debian package, or a sentence when there is none.
func Find(bin, name, fallback, install string) (string, error) {
	if bin != "" {
		p, err := exec.LookPath(bin)
		if err != nil {
			return "", fmt.Errorf("%s binary %q: %w", name, bin, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if fallback != "" {
		if fi, err := os.Stat(fallback); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return fallback, nil
		}
	}
	where := "on PATH"
	if fallback != "" {
		where += " or at " + fallback
	}
	return "", fmt.Errorf("%s not found %s: %s", name, where, install)
}

// FreePorts finds n distinct TCP ports free on host now, by binding them
// all and letting go: a profile that must be told its ports (no ":0")
// gets them here, for tests and loopback runs.
func FreePorts(host string, n int) ([]uint16, error) {
	var ports []uint16
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("find a free port on %s: %w", host, err)
		}
		defer l.Close()
		ports = append(ports, uint16(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}

// Chown gives the run directory and the files in it to u, so a proxy
// running as u can write its logs and sockets there. A nil u does nothing.
func Chown(u *User, paths ...string) error {
	if u == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, int(u.UID), int(u.GID)); err != nil {
			return err
		}
	}
	return nil
}

// RunDir makes dir (absolute) if given, else a new temporary directory
// for the proxy called name, marked with this process's pid
// (leftover.TempDir: loadgen-NAME-PID-…, which loadgen cleanup removes
// once the process is gone; owned: the caller removes it).
func RunDir(dir, name string) (path string, owned bool, err error) {
	if dir != "" {
		if dir, err = filepath.Abs(dir); err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			return "", false, fmt.Errorf("run directory: %w", err)
		}
		return dir, false, nil
	}
	d, err := leftover.TempDir(name)
	if err != nil {
		return "", false, fmt.Errorf("run directory: %w", err)
	}
	return d, true, nil
}
