package web

import (
	"context"
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

// Serve says where it serves, builds the page afresh for each request at
// "/", answers 404 elsewhere and 405 to a POST, and stops when its context
// ends. (The page of a real history, served by strata timeline --serve, is
// TestTimelineServe in cmd/strata.)
func TestServe(t *testing.T) {
	var builds int
	var mu sync.Mutex
	build := func() (*timeline.Timeline, error) {
		mu.Lock()
		builds++
		mu.Unlock()
		return &timeline.Timeline{}, nil
	}
	var out syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", build, &out) }()
	re := regexp.MustCompile(`^serving the timeline on (http://127\.0\.0\.1:[0-9]+/) \(interrupt to stop\)\n$`)
	var url string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 10*time.Second, 20*time.Millisecond)
	for range 2 {
		resp, err := http.Get(url)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Contains(t, strings.ToLower(string(body)), "<!doctype html>")
	}
	mu.Lock()
	require.Equal(t, 2, builds)
	mu.Unlock()
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

// The page answers only requests whose Host names a loopback address: a
// site whose DNS name was made to resolve to 127.0.0.1 (DNS rebinding)
// sends its own name and reads nothing of the recorded history.
func TestHandlerRefusesOtherHosts(t *testing.T) {
	h := Handler(func() (*timeline.Timeline, error) { return &timeline.Timeline{}, nil })
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
