package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/internal/syncbuf"
	"github.com/strata-dev/strata/timeline"
)

// counted is a Page whose Build counts its calls and whose Heads is what
// the test sets.
type counted struct {
	mu     sync.Mutex
	builds int
	heads  string
}

func (c *counted) page() Page {
	return Page{
		Build: func() (*timeline.Timeline, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.builds++
			return &timeline.Timeline{}, nil
		},
		Heads: func() (string, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.heads, nil
		},
	}
}

func (c *counted) set(heads string) { c.mu.Lock(); c.heads = heads; c.mu.Unlock() }

func (c *counted) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.builds }

// testToken is the token the tests' handlers are made with.
const testToken = "TOKEN0123456789ABCDEFGHIJK"

// handler is Handler(p, testToken).
func handler(p Page) http.Handler { return Handler(p, testToken) }

// get serves a GET of "/?t=testToken" from 127.0.0.1 with the given headers.
func get(h http.Handler, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:18931/?t="+testToken, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Serve says where it serves, builds the page when the history's heads
// changed and serves the one it built otherwise, answers 404 elsewhere and
// 405 to a POST, and stops when its context ends. (The page of a real
// history, served by strata timeline --serve, is TestTimelineServe in
// cmd/strata.)
func TestServe(t *testing.T) {
	c := &counted{heads: "a"}
	var out syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", c.page(), &out) }()
	re := regexp.MustCompile(`^serving the timeline on (http://127\.0\.0\.1:[0-9]+/)\?t=([A-Z2-7]{26}) \(interrupt to stop\)\n$`)
	var base, url, token string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(out.String())
		if m != nil {
			base, token = m[1], m[2]
			url = base + "?t=" + token
		}
		return m != nil
	}, 10*time.Second, 20*time.Millisecond)
	fetch := func() {
		t.Helper()
		resp, err := http.Get(url)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Contains(t, strings.ToLower(string(body)), "<!doctype html>")
	}
	fetch()
	fetch()
	require.Equal(t, 1, c.count(), "the same heads: the page built is served again")
	c.set("b")
	fetch()
	require.Equal(t, 2, c.count(), "the heads moved: the page is built again")
	resp, err := http.Get(base + "other?t=" + token)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	for _, u := range []string{base, base + "?t=", base + "?t=" + token[1:], base + "other"} {
		resp, err = http.Get(u)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, u)
	}
	require.Equal(t, 2, c.count(), "a request without the token built the page")
	resp, err = http.Post(url, "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop when its context ended")
	}
}

// The served page says, in headers a <meta> cannot set, that no page may
// frame it, that it is not to be kept in a cache, and that it sends no
// Referer; its policy names the page's script by hash and allows no
// inline script at large.
func TestServedHeaders(t *testing.T) {
	c := &counted{heads: "a"}
	rec := get(handler(c.page()))
	require.Equal(t, http.StatusOK, rec.Code)
	csp := rec.Header().Get("Content-Security-Policy")
	require.Equal(t, timeline.Policy()+"; frame-ancestors 'none'", csp)
	require.Contains(t, csp, "default-src 'none'")
	require.Regexp(t, `script-src 'sha256-[A-Za-z0-9+/]{43}='`, csp)
	require.NotRegexp(t, `script-src[^;]*unsafe-inline`, csp)
	require.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"))
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	require.Equal(t, "no-referrer", rec.Header().Get("Referrer-Policy"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
}

// The page answers only requests whose Host names a loopback address: a
// site whose DNS name was made to resolve to 127.0.0.1 (DNS rebinding)
// sends its own name and reads nothing of the recorded history.
func TestHandlerRefusesOtherHosts(t *testing.T) {
	h := handler((&counted{}).page())
	for host, want := range map[string]int{
		"127.0.0.1:18931":        http.StatusOK,
		"127.0.0.1":              http.StatusOK,
		"localhost:18931":        http.StatusOK,
		"LOCALHOST":              http.StatusOK,
		"[::1]:18931":            http.StatusOK,
		"[::1]":                  http.StatusOK,
		"evil.example.com:18931": http.StatusMisdirectedRequest,
		"evil.example.com":       http.StatusMisdirectedRequest,
		"127.0.0.1.nip.io":       http.StatusMisdirectedRequest,
		"10.0.0.1:18931":         http.StatusMisdirectedRequest,
		"":                       http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest(http.MethodGet, "http://x/?t="+testToken, nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
		if want != http.StatusOK && strings.Contains(strings.ToLower(rec.Body.String()), "<!doctype html>") {
			t.Errorf("Host %q: the page was served", host)
		}
	}
}

// A request a browser sent for another site — an <img> or a form of any
// web page pointing at 127.0.0.1:PORT, which carries this very Host — is
// refused with 403 and one line, before anything is built: such a site
// reads nothing, and now makes strata build nothing either (attack22 O-4).
// The page's own requests (typed in, reloaded) and clients that send
// neither header (curl) are served.
func TestHandlerRefusesOtherSites(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"no header (curl)", nil, http.StatusOK},
		{"typed in the address bar", []string{"Sec-Fetch-Site", "none"}, http.StatusOK},
		{"reloaded", []string{"Sec-Fetch-Site", "same-origin"}, http.StatusOK},
		{"its own origin", []string{"Origin", "http://127.0.0.1:18931", "Sec-Fetch-Site", "same-origin"}, http.StatusOK},
		{"an <img> of another site", []string{"Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image"}, http.StatusForbidden},
		{"another port of 127.0.0.1", []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"a value to come", []string{"Sec-Fetch-Site", "cross-planet"}, http.StatusForbidden},
		{"another origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"another origin, said to be the same", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "same-origin"}, http.StatusForbidden},
		{"another port's origin", []string{"Origin", "http://127.0.0.1:9999"}, http.StatusForbidden},
		{"another name's origin", []string{"Origin", "http://localhost:18931"}, http.StatusForbidden},
		{"https", []string{"Origin", "https://127.0.0.1:18931"}, http.StatusForbidden},
		{"a sandboxed or file page", []string{"Origin", "null"}, http.StatusForbidden},
		{"the report's request", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Dest", "image"}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &counted{heads: "a"}
			rec := get(handler(c.page()), tc.headers...)
			require.Equal(t, tc.want, rec.Code, rec.Body.String())
			if tc.want == http.StatusOK {
				require.Equal(t, 1, c.count())
				return
			}
			require.Equal(t, 0, c.count(), "a refused request built the page")
			body := rec.Body.String()
			require.Regexp(t, `^refused: a request another web site made \((Sec-Fetch-Site|Origin): "[^"\n]*"\); open the page from the address bar\n$`, body)
		})
	}
}

// However many requests come at once, one page is built at a time, and
// the requests that waited for it are served it: forty reloads of an
// unchanged history build it once.
func TestHandlerBuildsOneAtATime(t *testing.T) {
	var (
		mu                sync.Mutex
		builds, now, most int
		entered           = make(chan struct{}, 1)
		release           = make(chan struct{})
		once              sync.Once
	)
	open := func() { once.Do(func() { close(release) }) }
	defer open()
	h := handler(Page{
		Build: func() (*timeline.Timeline, error) {
			mu.Lock()
			builds++
			now++
			most = max(most, now)
			mu.Unlock()
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
			mu.Lock()
			now--
			mu.Unlock()
			return &timeline.Timeline{}, nil
		},
		Heads: func() (string, error) { return "a", nil },
	})
	var wg sync.WaitGroup
	codes := make(chan int, 40)
	serve := func() {
		defer wg.Done()
		codes <- get(h).Code
	}
	wg.Add(1)
	go serve()
	<-entered // the first request builds; the others come while it does
	wg.Add(39)
	for range 39 {
		go serve()
	}
	open()
	wg.Wait()
	close(codes)
	for code := range codes {
		require.Equal(t, http.StatusOK, code)
	}
	require.Equal(t, 1, most, "builds at once")
	require.Equal(t, 1, builds, "builds of one history")
}

// A request that waits for the page being built stops waiting when its
// client goes away, and builds nothing.
func TestHandlerWaitEndsWithTheClient(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var builds int
	var mu sync.Mutex
	h := handler(Page{
		Build: func() (*timeline.Timeline, error) {
			mu.Lock()
			builds++
			mu.Unlock()
			close(entered)
			<-release
			return &timeline.Timeline{}, nil
		},
		Heads: func() (string, error) { return "a", nil },
	})
	first := make(chan int)
	go func() { first <- get(h).Code }()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:18931/?t="+testToken, nil).WithContext(ctx)
	h.ServeHTTP(httptest.NewRecorder(), req) // returns: it does not wait for the build
	close(release)
	require.Equal(t, http.StatusOK, <-first)
	mu.Lock()
	require.Equal(t, 1, builds)
	mu.Unlock()
}

// A build or a read of the heads that fails is a 500 with its error, and
// nothing is kept: the next request builds again.
func TestHandlerKeepsNoFailure(t *testing.T) {
	var builds int
	fail := errors.New("refs/strata/state: history damaged")
	heads := errors.New("read ref refs/strata/state: permission denied")
	var headsErr, buildErr error = nil, fail
	h := handler(Page{
		Build: func() (*timeline.Timeline, error) {
			builds++
			return &timeline.Timeline{}, buildErr
		},
		Heads: func() (string, error) { return "a", headsErr },
	})
	rec := get(h)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Equal(t, fail.Error()+"\n", rec.Body.String())
	buildErr = nil
	require.Equal(t, http.StatusOK, get(h).Code)
	require.Equal(t, 2, builds)
	headsErr = heads
	rec = get(h)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Equal(t, heads.Error()+"\n", rec.Body.String())
	require.Equal(t, 2, builds)
}

// A request without the run's token, or with another one, is refused with
// 403 and one line before anything is read or built: 127.0.0.1 answers
// every user of the machine, and the page holds what only its user may
// read (attack36b F1: uid nobody read the page, home notes and all, with
// curl). curl's request with the token is served.
func TestHandlerRefusesWithoutToken(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		want        int
	}{
		{"the token", "?t=" + testToken, http.StatusOK},
		{"the token, then other parameters", "?t=" + testToken + "&x=1", http.StatusOK},
		{"no query", "", http.StatusForbidden},
		{"no token", "?t=", http.StatusForbidden},
		{"another token", "?t=" + strings.Repeat("A", len(testToken)), http.StatusForbidden},
		{"the token less its last letter", "?t=" + testToken[:len(testToken)-1], http.StatusForbidden},
		{"the token and more", "?t=" + testToken + "A", http.StatusForbidden},
		{"the token in lower case", "?t=" + strings.ToLower(testToken), http.StatusForbidden},
		{"the token under another name", "?token=" + testToken, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &counted{heads: "a"}
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:18931/"+tc.query, nil)
			rec := httptest.NewRecorder()
			handler(c.page()).ServeHTTP(rec, req)
			require.Equal(t, tc.want, rec.Code, rec.Body.String())
			if tc.want == http.StatusOK {
				require.Equal(t, 1, c.count())
				return
			}
			require.Equal(t, 0, c.count(), "a request without the token built the page")
			require.Equal(t, "refused: open the page at the address strata timeline --serve printed, with its token\n", rec.Body.String())
		})
	}
	// a handler made without a token serves nobody
	c := &counted{heads: "a"}
	rec := httptest.NewRecorder()
	Handler(c.page(), "").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:18931/?t=", nil))
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, 0, c.count())
}

// Each run's token is new, and long enough (130 bits) not to be guessed.
func TestToken(t *testing.T) {
	a, b := Token(), Token()
	require.NotEqual(t, a, b)
	require.Regexp(t, `^[A-Z2-7]{26}$`, a)
}

// listening records the addresses listen asked netListen for, listening
// on them.
func listening(t *testing.T) *[]string {
	t.Helper()
	var asked []string
	orig := netListen
	t.Cleanup(func() { netListen = orig })
	netListen = func(network, addr string) (net.Listener, error) {
		asked = append(asked, addr)
		return orig(network, addr)
	}
	return &asked
}

// localhost is 127.0.0.1, never a name looked up: a hosts file or a DNS
// answer could make it a LAN address, and the page was served there
// (attack36b F3).
func TestListenLocalhostLiteral(t *testing.T) {
	asked := listening(t)
	for _, addr := range []string{"localhost:0", "LocalHost:0"} {
		ln, err := listen(addr)
		require.NoError(t, err)
		require.True(t, ln.Addr().(*net.TCPAddr).IP.IsLoopback())
		ln.Close()
	}
	require.Equal(t, []string{"127.0.0.1:0", "127.0.0.1:0"}, *asked)
	// a name other than localhost is not looked up either
	_, err := listen("example.com:0")
	require.ErrorIs(t, err, ErrNotLoopback)
	require.Len(t, *asked, 2)
}

// On a machine without 127.0.0.1, localhost is [::1].
func TestListenLocalhostIPv6(t *testing.T) {
	var asked []string
	orig := netListen
	defer func() { netListen = orig }()
	netListen = func(network, addr string) (net.Listener, error) {
		asked = append(asked, addr)
		if addr == "127.0.0.1:0" {
			return nil, &net.OpError{Op: "listen", Net: network, Err: os.NewSyscallError("bind", syscall.EADDRNOTAVAIL)}
		}
		return nil, errors.New("no IPv6 here either")
	}
	_, err := listen("localhost:0")
	require.ErrorContains(t, err, "no IPv6 here either")
	require.Equal(t, []string{"127.0.0.1:0", "[::1]:0"}, asked)
}

// fakeListener is a listener that says it is on a LAN address.
type fakeListener struct {
	net.Listener
	closed bool
}

func (f *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 2), Port: 8080} }
func (f *fakeListener) Close() error   { f.closed = true; return f.Listener.Close() }

// A listener that is not on a loopback address, whatever gave it, is
// closed and refused.
func TestListenRefusesNonLoopback(t *testing.T) {
	orig := netListen
	defer func() { netListen = orig }()
	var fake *fakeListener
	netListen = func(network, addr string) (net.Listener, error) {
		ln, err := orig(network, addr)
		if err != nil {
			return nil, err
		}
		fake = &fakeListener{Listener: ln}
		return fake, nil
	}
	_, err := listen("localhost:0")
	require.ErrorIs(t, err, ErrNotLoopback)
	require.Equal(t, `"localhost:0" is on 192.0.2.2:8080, not a loopback address`, err.Error())
	require.True(t, fake.closed)
}

// The server closes a keep-alive connection idle for idleTimeout (it kept
// them for good: a local process could pile them up to the file limit,
// attack36b F6), and bounds the writing of an answer.
func TestServerTimeouts(t *testing.T) {
	srv := newServer(http.NotFoundHandler())
	require.Equal(t, 60*time.Second, srv.IdleTimeout)
	require.Equal(t, 5*time.Minute, srv.WriteTimeout)
	require.Equal(t, 10*time.Second, srv.ReadHeaderTimeout)

	defer func(d time.Duration) { idleTimeout = d }(idleTimeout)
	idleTimeout = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv = newServer(handler((&counted{heads: "a"}).page()))
	go srv.Serve(ln)
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "GET /?t=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", testToken)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = conn.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "the idle connection was not closed")
}
