package client

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// ProxyEnv is the proxy variable a client of protocol would read for the
// first of targets that NO_PROXY (or no_proxy) does not exempt, with the
// host and port that target connects to: HTTP_PROXY (or http_proxy) for
// http:// targets, HTTPS_PROXY (or https_proxy) for https:// ones and for
// gRPC, as grpc-go reads it; raw TCP has none. name is "" when no
// variable applies. Only NO_PROXY exempts a target, as in curl: Go's own
// HTTP client never proxies a loopback address, curl does.
func ProxyEnv(protocol string, targets []string, getenv func(string) string) (name, host, port string) {
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
		name := firstSet(getenv, names...)
		if name == "" || NoProxy(getenv(firstSet(getenv, "NO_PROXY", "no_proxy")), host, port) {
			continue
		}
		return name, host, port
	}
	return "", "", ""
}

// firstSet is the first of names set to a non-empty value, or "".
func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if getenv(n) != "" {
			return n
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

// NoProxy says whether NO_PROXY's list exempts host:port: "*", a host
// name (and its subdomains; a leading dot too), an IP address, a CIDR
// block, each with an optional :port.
func NoProxy(list, host, port string) bool {
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
