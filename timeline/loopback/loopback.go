// Package loopback checks that an address to serve the timeline on is a
// loopback one. It is apart from package timeline so that strata, which
// checks the address before strata-serve serves the page, links neither
// the timeline nor html/template.
package loopback

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Check checks that addr (host:port) names a loopback address only:
// the page shows every recorded version of the kept files, so it is never
// offered to other machines. "localhost" counts (strata-serve listens on
// 127.0.0.1 for it, never on what a lookup of the name gives); an empty
// host (every interface) does not. The port is a number from 0 to 65535,
// not a service name. It parses addr itself, with net/netip, rather than
// with package net: strata (every hook call) starts faster without net,
// which only strata-serve, which listens, links.
func Check(addr string) error {
	host, port, ok := splitHostPort(addr)
	if !ok {
		return fmt.Errorf("%q is not HOST:PORT", addr)
	}
	if !IsLocalhost(host) {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.IsLoopback() || ip.Zone() != "" {
			return fmt.Errorf("%q is not a loopback address (use 127.0.0.1:PORT, [::1]:PORT or localhost:PORT)", addr)
		}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil { // digits only, at most 65535
		return fmt.Errorf("%q: the port is not a number from 0 to 65535", addr)
	}
	return nil
}

// IsLocalhost reports whether host is the name localhost (any case).
func IsLocalhost(host string) bool { return strings.EqualFold(host, "localhost") }

// splitHostPort is the host and port of HOST:PORT or [HOST]:PORT, as
// net.SplitHostPort splits it: a host with a colon must be in brackets.
func splitHostPort(addr string) (string, string, bool) {
	if rest, ok := strings.CutPrefix(addr, "["); ok {
		host, port, ok := strings.Cut(rest, "]")
		if !ok || !strings.HasPrefix(port, ":") || strings.ContainsAny(port[1:], ":[]") {
			return "", "", false
		}
		return host, port[1:], true
	}
	i := strings.LastIndexByte(addr, ':')
	if i < 0 || strings.ContainsAny(addr[:i], ":[]") || strings.ContainsAny(addr[i+1:], "[]") {
		return "", "", false
	}
	return addr[:i], addr[i+1:], true
}

// IsHost reports whether an HTTP request's Host header (with or without a
// port) names a loopback address. The page served on loopback answers only
// requests that name it so: a web site whose name its DNS made resolve to
// 127.0.0.1 (DNS rebinding) sends its own name, and gets nothing.
func IsHost(host string) bool {
	h, _, ok := splitHostPort(host)
	if !ok {
		h = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if IsLocalhost(h) {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback() && ip.Zone() == ""
}
