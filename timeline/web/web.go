// Package web serves the timeline page over HTTP, on a loopback address,
// for strata-serve (strata timeline --serve). It is apart from package
// timeline so that strata itself does not link net/http.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
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

// Serve serves the page on addr (already checked by loopback.Check) until
// ctx ends (an interrupt), and says where on out: the URL it prints holds
// a token made for this run (Token), which every request must carry, so
// that another user of this machine, who can reach 127.0.0.1 too, reads
// nothing. A listener that is not on a loopback address is closed and
// refused (ErrNotLoopback).
func Serve(ctx context.Context, addr string, p Page, out io.Writer) error {
	token := Token()
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	srv := newServer(Handler(p, token))
	fmt.Fprintf(out, "serving the timeline on http://%s/?%s=%s (interrupt to stop)\n", ln.Addr(), tokenParam, token)
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

// The server's timeouts. A connection waits at most idleTimeout for its
// next request, so that idle keep-alive connections do not pile up to the
// file limit and lock the user out of the page; and an answer, the page's
// build included (seconds for a long history), is written within
// writeTimeout, so that a client that never reads does not hold its
// connection for good.
var (
	idleTimeout  = 60 * time.Second
	writeTimeout = 5 * time.Minute
)

// newServer is the http.Server that serves h.
func newServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout, WriteTimeout: writeTimeout}
}

// ErrNotLoopback is the error of a listener that is not on a loopback
// address.
var ErrNotLoopback = errors.New("not a loopback address")

// netListen is net.Listen; a test replaces it.
var netListen = net.Listen

// listen listens on addr, checked by loopback.Check. The name localhost
// is 127.0.0.1, or [::1] on a machine without 127.0.0.1, and is never
// looked up: a hosts file, or a DNS server asked for a name the hosts file
// lacks, could answer with any address. What it listens on is checked to
// be loopback all the same.
func listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%q is not HOST:PORT", addr)
	}
	var ln net.Listener
	if loopback.IsLocalhost(host) {
		ln, err = netListen("tcp", net.JoinHostPort("127.0.0.1", port))
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			ln, err = netListen("tcp", net.JoinHostPort("::1", port))
		}
	} else {
		if _, perr := netip.ParseAddr(host); perr != nil { // a name: never looked up
			return nil, fmt.Errorf("%q: %w", addr, ErrNotLoopback)
		}
		ln, err = netListen("tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		at := ln.Addr().String()
		ln.Close()
		return nil, fmt.Errorf("%q is on %s, %w", addr, at, ErrNotLoopback)
	}
	return ln, nil
}

// tokenParam is the query parameter that carries the token.
const tokenParam = "t"

// Token is a new random token (crypto/rand, 130 bits, base32) for a page's
// URL.
func Token() string { return rand.Text() }

// Handler serves the page at "/" to requests whose Host names a loopback
// address (loopback.IsHost), that no other site made (fromOtherSite) and
// that carry token (the query ?t=TOKEN, compared in constant time); the
// others are refused before anything is read. An empty token refuses
// every request.
// A reload shows what was recorded since: the page is built again when
// p.Heads changed, else the one built last is served. One page is built
// at a time; the requests that come meanwhile wait for it. (Building a
// page of a long history takes seconds and hundreds of MB: a site that
// had the browser send forty requests at once ran strata-serve to 890 MB.)
func Handler(p Page, token string) http.Handler {
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
		if !hasToken(r, token) { // another user of this machine: 127.0.0.1 is theirs too
			http.Error(w, "refused: open the page at the address strata timeline --serve printed, with its token", http.StatusForbidden)
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

// hasToken reports whether r's URL carries token.
func hasToken(r *http.Request, token string) bool {
	got := r.URL.Query().Get(tokenParam)
	return token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// fromOtherSite says why r is one a browser sent for another site ("" when
// it is not): Sec-Fetch-Site other than same-origin or none (none: typed
// in the address bar, a bookmark), or an Origin other than the page's own.
// Any site can have a browser send requests to 127.0.0.1 (an <img> of the
// page), with this Host: it reads nothing, but it must not make strata
// work. A request without these headers (curl, an old browser) passes
// this check (it must still carry the token).
func fromOtherSite(r *http.Request) string {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return fmt.Sprintf("Sec-Fetch-Site: %q", s)
	}
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, "http://"+r.Host) {
		return fmt.Sprintf("Origin: %q", o)
	}
	return ""
}
