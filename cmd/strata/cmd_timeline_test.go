package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/internal/syncbuf"
)

// emptyRepo is a new git repository with one empty commit and no
// .strata.yaml (strata's defaults).
func emptyRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "base"}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return dir
}

// TestTimelineServe: strata timeline --serve becomes strata-serve, which
// serves the page of the real history on 127.0.0.1:0 at the URL with the
// token it prints, with what was recorded since on a reload, refuses a
// request without the token and another site's request, and stops
// cleanly on an interrupt.
func TestTimelineServe(t *testing.T) {
	if testing.Short() {
		t.Skip("process tests skipped in -short mode")
	}
	dir := emptyRepo(t)
	require.NoError(t, os.MkdirAll(dir+"/.claude", 0o755))
	require.NoError(t, os.WriteFile(dir+"/.claude/workflow-state.json", []byte(`{"type": "DEBUG", "phase": "fix", "lastUpdated": "2026-11-22T10:00:00Z"}`), 0o644))
	e := &env{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Dir: dir, Now: time.Now}
	require.NoError(t, runRecord(context.Background(), e, recordOptions{}))

	cmd := exec.Command("strata", "-C", dir, "timeline", "--serve", "127.0.0.1:0")
	var out, stderr syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	re := regexp.MustCompile(`serving the timeline on (http://127\.0\.0\.1:[0-9]+/\?t=[A-Z2-7]{26}) \(interrupt to stop\)`)
	var url string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 10*time.Second, 20*time.Millisecond, "stderr: %s", &stderr)
	getURL := func(url string, headers ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	get := func(headers ...string) (int, string) {
		t.Helper()
		return getURL(url, headers...)
	}
	// without the token printed, as another user of the machine asks,
	// nothing is read (attack36b F1)
	bare, _, _ := strings.Cut(url, "?")
	for _, u := range []string{bare, bare + "?t=AAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		code, body := getURL(u)
		require.Equal(t, http.StatusForbidden, code, u)
		require.Equal(t, "refused: open the page at the address strata timeline --serve printed, with its token\n", body)
	}
	code, body := get()
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `data-lane="L1 files"`)
	require.Contains(t, body, `aria-label="add .claude/workflow-state.json`)
	require.NotContains(t, body, `aria-label="update .claude/workflow-state.json`)
	// what was recorded since is on the next reload
	require.NoError(t, os.WriteFile(dir+"/.claude/workflow-state.json", []byte(`{"type": "DEBUG", "phase": "verify", "lastUpdated": "2026-11-22T11:00:00Z"}`), 0o644))
	require.NoError(t, runRecord(context.Background(), e, recordOptions{}))
	code, body = get("Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `aria-label="update .claude/workflow-state.json`)
	// another site's request is refused (attack22 O-4)
	code, body = get("Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusForbidden, code)
	require.Regexp(t, `^refused: a request another web site made \(Sec-Fetch-Site: "cross-site"\); open the page from the address bar\n$`, body)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-done:
		require.NoError(t, err, "stderr: %s", stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGINT")
	}
}

// Without strata-serve, strata mcp and strata timeline say what is missing
// and how to install it, in one line, exit 3.
func TestServeWithoutCompanion(t *testing.T) {
	if testing.Short() {
		t.Skip("process tests skipped in -short mode")
	}
	r := newProcRepo(t)
	self, err := exec.LookPath("strata")
	require.NoError(t, err)
	for _, args := range [][]string{{"mcp"}, {"timeline"}, {"timeline", "-o", "page.html"}} {
		cmd := exec.Command(self, append([]string{"-C", r.dir}, args...)...)
		cmd.Env = append(r.env, "PATH=/nonexistent")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s", args)
		require.Equal(t, 3, ee.ExitCode(), "%s", args)
		require.Regexp(t, `^strata: strata-serve is missing: .*make install.*go install ./cmd/strata ./cmd/strata-serve\)\n$`, string(out), "%s", args)
	}
}
