package nginxingress

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
)

// fallbackBinary is where Debian and Ubuntu's nginx package puts nginx,
// outside the PATH of some users.
const fallbackBinary = "/usr/sbin/nginx"

// Available reports where nginx is: on PATH, else /usr/sbin/nginx. Its
// error says how to install it.
func Available() (path string, err error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if isExecutable(fallbackBinary) {
		return fallbackBinary, nil
	}
	return "", errors.New("nginxingress: nginx not found on PATH or at " + fallbackBinary + ": apt-get install nginx")
}

// binary is cfg.Binary if set (and executable), else Available.
func (c Config) binary() (string, error) {
	if c.Binary == "" {
		return Available()
	}
	p, err := exec.LookPath(c.Binary)
	if err != nil {
		return "", fmt.Errorf("nginxingress: nginx binary %q: %w", c.Binary, err)
	}
	return p, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

var versionRE = regexp.MustCompile(`nginx/(\d+)\.(\d+)\.(\d+)`)

// version is nginx's version as major*1e6 + minor*1e3 + patch (1.22.1 is
// 1022001), or 0 if `nginx -v` did not say.
func version(ctx context.Context, bin string) int {
	out, _ := exec.CommandContext(ctx, bin, "-v").CombinedOutput()
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return 0
	}
	v := 0
	for _, part := range m[1:] {
		n, _ := strconv.Atoi(string(part))
		v = v*1000 + n
	}
	return v
}

// hasErrorLogFlag reports whether nginx version v has -e (the error log
// before the config is read), which came in nginx 1.19.5. Without it nginx
// opens its compiled-in default log at start, which may be under /var/log.
func hasErrorLogFlag(v int) bool { return v >= 1_019_005 }
