package timeline

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
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

// Handler serves the page at "/", built afresh for each request, so a
// reload shows what was recorded since.
func Handler(build func() (*Timeline, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		t, err := build()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var buf bytes.Buffer
		if err := Render(&buf, t); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(buf.Bytes())
	})
}
