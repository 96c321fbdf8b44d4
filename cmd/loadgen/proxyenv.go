package main

import (
	"fmt"
	"io"
	"net"
	"os"

	"loadgen/loadgen/client"
)

// proxyNotice is the line loadgen says when a proxy variable
// (client.ProxyEnv) is set and NO_PROXY does not exclude the target:
// loadgen connects directly, since a load tester measuring a path must not
// go through another one silently. "" when no variable would apply. The
// variable's value is not printed: it may hold a password.
func proxyNotice(protocol string, targets []string, getenv func(string) string) string {
	name, host, port := client.ProxyEnv(protocol, targets, getenv)
	if name == "" {
		return ""
	}
	return fmt.Sprintf("loadgen: %s is set: loadgen ignores it and connects directly to %s (NO_PROXY=%s silences this)",
		name, net.JoinHostPort(host, port), host)
}

// noteProxyEnv prints run's proxyNotice, for its target or its request
// mix's URLs, on standard error.
func noteProxyEnv(stderr io.Writer, f *runFlags, protocol, target string) {
	targets := []string{target}
	if f.mix != nil {
		targets = targets[:0]
		for _, r := range f.mix.Requests {
			targets = append(targets, r.URL)
		}
	}
	if line := proxyNotice(protocol, targets, os.Getenv); line != "" {
		fmt.Fprintln(stderr, line)
	}
}
