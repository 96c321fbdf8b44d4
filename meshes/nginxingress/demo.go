package nginxingress

import (
	"context"
	"strconv"
)

// The built-in demo's nginx (loadgen sweep with neither -f nor --path):
// one worker, on a free loopback port, in front of loadgen's httpbin.

// demoConfig is the demo's nginx in front of upstream (host:port): one
// worker (as loadgen/sweep's DemoWhere says), a free port on loopback.
func demoConfig(upstream string) Config {
	return Config{Listen: "127.0.0.1:0", Upstream: upstream, Workers: 1}
}

// StartDemo starts the demo's nginx in front of upstream (host:port, the
// demo's httpbin); Close stops it.
func StartDemo(ctx context.Context, upstream string) (*Proxy, error) {
	return Start(ctx, demoConfig(upstream))
}

// DemoNote is what the demo's report says of its paths: with nginx, that
// the nginx path is a real nginx proxying to the same httpbin (pid
// targetPID); without, that the baseline path alone was swept and how
// nginx would add its path.
func DemoNote(targetPID int, nginx bool) string {
	if !nginx {
		return "nginx is not installed, so the demo swept the baseline path only (apt-get install nginx adds the nginx path)."
	}
	return "The nginx path is a real nginx (1 worker, generated config) proxying to the same httpbin; " +
		"proxy cpu is nginx's master and worker, target cpu is httpbin's (" + strconv.Itoa(targetPID) + ")."
}
