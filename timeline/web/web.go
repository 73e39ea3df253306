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
	"strings"
	"time"

	"github.com/strata-dev/strata/timeline"
	"github.com/strata-dev/strata/timeline/loopback"
)

// Page is what the server shows.
type Page struct {
	// Build reads the history into the page's timeline.
	Build func() (*timeline.Timeline, error)
	// Heads names what Build reads (engine.Engine.HistoryHeads): a page
	// built is served again while Heads gives the same answer.
	Heads func() (string, error)
}

// Serve serves the page on addr (already checked by timeline.Loopback)
// until ctx ends (an interrupt), and says where on out.
func Serve(ctx context.Context, addr string, p Page, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: Handler(p), ReadHeaderTimeout: 10 * time.Second}
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

// Handler serves the page at "/" to requests whose Host names a loopback
// address (loopback.IsHost) and that no other site made (fromOtherSite).
// A reload shows what was recorded since: the page is built again when
// p.Heads changed, else the one built last is served. One page is built
// at a time; the requests that come meanwhile wait for it. (Building a
// page of a long history takes seconds and hundreds of MB: a site that
// had the browser send forty requests at once ran strata-serve to 890 MB.)
func Handler(p Page) http.Handler {
	var (
		// turn is held by the request that checks and builds the page, so
		// that one is built at a time; a channel, not a mutex, so that a
		// request whose client went away stops waiting for it.
		turn  = make(chan struct{}, 1)
		heads string // what page was built from, under turn
		page  []byte // the last page built, never changed once made
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", timeline.Policy()+"; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		if !loopback.IsHost(r.Host) { // DNS rebinding: another site's name for 127.0.0.1
			http.Error(w, "this page answers only to a loopback name (127.0.0.1, [::1], localhost)", http.StatusMisdirectedRequest)
			return
		}
		if why := fromOtherSite(r); why != "" {
			http.Error(w, "refused: a request another web site made ("+why+"); open the page from the address bar", http.StatusForbidden)
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
		select {
		case turn <- struct{}{}:
		case <-r.Context().Done():
			return // the client went away while a page was built
		}
		body, err := func() ([]byte, error) {
			defer func() { <-turn }()
			now, err := p.Heads()
			if err != nil {
				return nil, err
			}
			if page != nil && now == heads {
				return page, nil
			}
			t, err := p.Build()
			if err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			if err := timeline.Render(&buf, t); err != nil {
				return nil, err
			}
			page, heads = buf.Bytes(), now
			return page, nil
		}()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(body)
	})
}

// fromOtherSite says why r is one a browser sent for another site ("" when
// it is not): Sec-Fetch-Site other than same-origin or none (none: typed
// in the address bar, a bookmark), or an Origin other than the page's own.
// Any site can have a browser send requests to 127.0.0.1 (an <img> of the
// page), with this Host: it reads nothing, but it must not make strata
// work. A request without these headers (curl, an old browser) is served.
func fromOtherSite(r *http.Request) string {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return fmt.Sprintf("Sec-Fetch-Site: %q", s)
	}
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, "http://"+r.Host) {
		return fmt.Sprintf("Origin: %q", o)
	}
	return ""
}
