package nginxingress

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"

	"loadgen/meshes/proxyproc"
)

// fallbackBinary is where Debian and Ubuntu's nginx package puts nginx,
// outside the PATH of some users.
const fallbackBinary = "/usr/sbin/nginx"

// Available reports where nginx is: on PATH, else /usr/sbin/nginx. Its
// error is the one wording of nginx missing, in every command that needs
// it (size, the demo, a study, a sidecar path): "nginx not found on PATH
// or at /usr/sbin/nginx: apt-get install nginx", caddy's and haproxy's
// words (proxyproc.Find); the libraries that may not import meshes
// (loadgen/sweep, loadgen/study) are handed it.
func Available() (path string, err error) { return available(fallbackBinary) }

// available is Available with nginx's place outside PATH at fallback.
func available(fallback string) (string, error) {
	return proxyproc.Find("", "nginx", fallback, "apt-get install nginx")
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
