package timeline

import (
	"fmt"
	"net"
	"strings"
)

// Loopback checks that addr (host:port) names a loopback address only:
// the page shows every recorded version of the kept files, so it is never
// offered to other machines. "localhost" counts; an empty host (every
// interface) does not.
func Loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT", addr)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address (use 127.0.0.1:PORT, [::1]:PORT or localhost:PORT)", addr)
	}
	return nil
}
