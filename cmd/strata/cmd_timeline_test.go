package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is a writer the serving goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTimelineServe serves the page on 127.0.0.1:0, fetches it and stops
// on the context's end.
func TestTimelineServe(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "base"}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.MkdirAll(dir+"/.claude", 0o755))
	require.NoError(t, os.WriteFile(dir+"/.claude/workflow-state.json", []byte(`{"type": "DEBUG", "phase": "fix", "lastUpdated": "2026-11-22T10:00:00Z"}`), 0o644))
	var out lockedBuffer
	e := &env{In: strings.NewReader(""), Out: &out, Err: io.Discard, Dir: dir, Now: time.Now}
	require.NoError(t, runRecord(e, recordOptions{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runTimeline(ctx, e, timelineOptions{Serve: "127.0.0.1:0"}) }()
	re := regexp.MustCompile(`serving the timeline on (http://127\.0\.0\.1:[0-9]+/)`)
	var url string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 10*time.Second, 20*time.Millisecond)
	resp, err := http.Get(url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `data-lane="L1 files"`)
	require.Contains(t, string(body), `aria-label="add .claude/workflow-state.json`)
	resp, err = http.Get(url + "other")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
}
