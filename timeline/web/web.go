// Package web serves the timeline page over HTTP, on a loopback address,
// for strata-serve (strata timeline --serve). It is apart from package
// timeline so that strata itself does not link net/http.
package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/strata-dev/strata/timeline"
	"github.com/strata-dev/strata/timeline/loopback"
)

// Serve serves the page on addr (already checked by timeline.Loopback)
// until ctx ends (an interrupt), and says where on out.
func Serve(ctx context.Context, addr string, build func() (*timeline.Timeline, error), out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: Handler(build), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "serving the timeline on http://%s/ (interrupt to stop)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		return nil
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// Handler serves the page at "/", built afresh for each request, so a
// reload shows what was recorded since, to requests whose Host names a
// loopback address only (loopback.IsHost).
func Handler(build func() (*timeline.Timeline, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopback.IsHost(r.Host) { // DNS rebinding: another site's name for 127.0.0.1
			http.Error(w, "this page answers only to a loopback name (127.0.0.1, [::1], localhost)", http.StatusMisdirectedRequest)
			return
		}
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
		if err := timeline.Render(&buf, t); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(buf.Bytes())
	})
}
