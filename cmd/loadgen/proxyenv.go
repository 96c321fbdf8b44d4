package main

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"loadgen/loadgen/sweep"
)

// proxyNotice is the line loadgen says when a proxy variable (HTTP_PROXY
// for http:// targets, HTTPS_PROXY for https:// and for gRPC, as grpc-go
// reads it) is set and NO_PROXY does not exclude the target: loadgen
// connects directly, since a load tester measuring a path must not go
// through another one silently. "" when no variable would apply. The
// variable's value is not printed: it may hold a password.
//
// Go's own HTTP client never proxies a loopback address; curl does, and
// users expect curl's reading, so only NO_PROXY exempts a target here.
func proxyNotice(protocol string, targets []string, getenv func(string) string) string {
	for _, t := range targets {
		scheme, host, port := proxyTarget(protocol, t)
		var names []string
		switch scheme {
		case "http":
			names = []string{"HTTP_PROXY", "http_proxy"}
		case "https":
			names = []string{"HTTPS_PROXY", "https_proxy"}
		default:
			continue // raw TCP: no proxy convention
		}
		name := ""
		for _, n := range names {
			if getenv(n) != "" {
				name = n
				break
			}
		}
		if name == "" || noProxy(firstEnv(getenv, "NO_PROXY", "no_proxy"), host, port) {
			continue
		}
		return fmt.Sprintf("loadgen: %s is set: loadgen ignores it and connects directly to %s (NO_PROXY=%s silences this)",
			name, net.JoinHostPort(host, port), host)
	}
	return ""
}

func firstEnv(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// proxyTarget is the scheme a proxy variable is chosen by, and the host
// and port loadgen connects to.
func proxyTarget(protocol, target string) (scheme, host, port string) {
	if strings.HasPrefix(protocol, "tcp") {
		return "", "", ""
	}
	if strings.Contains(target, "://") {
		u, err := url.Parse(target)
		if err != nil {
			return "", "", ""
		}
		scheme, host, port = u.Scheme, u.Hostname(), u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[scheme]
		}
		return scheme, host, port
	}
	if strings.HasPrefix(protocol, "grpc") {
		if h, p, err := net.SplitHostPort(target); err == nil {
			return "https", h, p // grpc-go looks up HTTPS_PROXY for every target
		}
	}
	return "", "", ""
}

// noProxy says whether NO_PROXY's list exempts host:port: "*", a host
// name (and its subdomains; a leading dot too), an IP address, a CIDR
// block, each with an optional :port.
func noProxy(list, host, port string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	ip, ipErr := netip.ParseAddr(host)
	for _, e := range strings.Split(list, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			return true
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			if ipErr == nil && p.Contains(ip) {
				return true
			}
			continue
		}
		if h, p, err := net.SplitHostPort(e); err == nil {
			if p != port {
				continue
			}
			e = h
		}
		e = strings.Trim(e, "[]")
		if a, err := netip.ParseAddr(e); err == nil {
			if ipErr == nil && a == ip {
				return true
			}
			continue
		}
		e = strings.TrimPrefix(e, ".")
		if host == e || strings.HasSuffix(host, "."+e) {
			return true
		}
	}
	return false
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

// sweepURLs are the addresses a sweep's paths load.
func sweepURLs(s *sweep.Spec) []string {
	var out []string
	for _, p := range s.Paths {
		if p.URL != "" {
			out = append(out, p.URL)
		}
	}
	return out
}
