package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
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

// get serves a GET of "/" from 127.0.0.1 with the given headers.
func get(h http.Handler, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:18931/", nil)
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
	re := regexp.MustCompile(`^serving the timeline on (http://127\.0\.0\.1:[0-9]+/) \(interrupt to stop\)\n$`)
	var url string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
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
	resp, err := http.Get(url + "other")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
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
	rec := get(Handler(c.page()))
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
	h := Handler((&counted{}).page())
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
		req := httptest.NewRequest(http.MethodGet, "http://x/", nil)
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
			rec := get(Handler(c.page()), tc.headers...)
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
	h := Handler(Page{
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
	h := Handler(Page{
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
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:18931/", nil).WithContext(ctx)
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
	h := Handler(Page{
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
