package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/timeline"
	"github.com/strata-dev/strata/timeline/web"
)

// chromiumBin finds Debian's chromium (installed by scripts/ensure-chromium.sh,
// which .ci/run calls before make test) or skips the test saying so.
func chromiumBin(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not found: run scripts/ensure-chromium.sh (apt-get install -y chromium) to run the browser tests")
	return ""
}

// headless runs chromium on a file:// URL with the given extra flags and
// returns its stdout; the page gets 2 s of virtual time for its scripts.
func headless(t *testing.T, bin, url string, extra ...string) []byte {
	t.Helper()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--virtual-time-budget=2000"}
	args = append(append(args, extra...), url)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium %v:\n%s", extra, stderr.String())
	return stdout.Bytes()
}

// TestTimelineInBrowser records a small history with real git and strata
// (versions of a workflow-state file with two phases, a rejected version, a
// Phase Outcome with a decision and its resolution, a restore) on pinned
// clocks, writes the page with `strata timeline`, loads it in headless
// Chromium and checks the DOM after its scripts ran, then keeps a
// screenshot under the test's temp dir.
func TestTimelineInBrowser(t *testing.T) {
	bin := chromiumBin(t)
	strata, err := exec.LookPath("strata")
	require.NoError(t, err, "testscript.Main puts the test binary on PATH as strata")
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".claude"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "PhaseOutcomes", "auth"), 0o755))
	require.NoError(t, os.MkdirAll(home, 0o755))
	// run runs a command at the instant now; "!" before it allows a failure.
	run := func(now string, name string, args ...string) string {
		t.Helper()
		at := strings.TrimPrefix(now, "!")
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "MEMORY_FILE_PATH=", "STRATA_TEST_NOW="+at,
			"STRATA_TEST_EPOCH=", "GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com",
			"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_COMMITTER_DATE="+at, "GIT_AUTHOR_DATE="+at)
		out, err := cmd.CombinedOutput()
		if !strings.HasPrefix(now, "!") {
			require.NoError(t, err, "%s %v:\n%s", name, args, out)
		}
		return string(out)
	}
	write := func(rel, content string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(repo, rel), []byte(content), 0o644))
	}
	const ws = ".claude/workflow-state.json"
	run("2026-11-22T09:00:00Z", "git", "init", "-q")
	run("2026-11-22T09:00:00Z", "git", "config", "user.name", "Ada Lovelace")
	run("2026-11-22T09:00:00Z", "git", "commit", "-q", "--allow-empty", "-m", "base")
	write(ws, `{"type": "DEBUG", "phase": "reproduce", "lastUpdated": "2026-11-22T09:00:00Z"}`+"\n")
	run("2026-11-22T09:00:00Z", strata, "record")
	write(ws, `{"type": "DEBUG", "phase": "fix", "lastUpdated": "2026-11-22T10:00:00Z"}`+"\n")
	run("2026-11-22T10:00:00Z", strata, "record")
	write(ws, `{"type": "NOPE", "phase": "fix", "lastUpdated": "2026-11-22T10:30:00Z"}`+"\n")
	out := run("!2026-11-22T10:30:00Z", strata, "record")
	require.Contains(t, out, "rejected")
	write("PhaseOutcomes/auth/001-plan.yaml", `phase: plan
feature: auth
produced: []
findings: []
pending_decisions:
  - id: D-001
    type: design
    question: rotate refresh tokens?
    options: [rotate, keep]
    recommended: rotate
  - id: D-002
    type: naming
    question: rename the package?
    options: [yes, no]
    recommended: no
    blocking: false
`)
	run("2026-11-22T11:00:00Z", strata, "record", "PhaseOutcomes/auth/001-plan.yaml")
	run("2026-11-22T12:00:00Z", strata, "decide", "D-001", "rotate", "--feature", "auth")
	run("2026-11-22T13:00:00Z", strata, "restore", ws, "--at", "2026-11-22T09:30:00Z")

	page := filepath.Join(dir, "timeline.html")
	out = run("2026-11-22T14:00:00Z", strata, "timeline", "-o", page)
	require.Contains(t, out, "wrote "+page)

	dom := string(headless(t, bin, "file://"+page+"#ev-1", "--dump-dom"))
	require.Contains(t, dom, `data-ready="true"`, "the page's script ran")
	for _, lane := range []string{"workflow phases", "decisions", "L1 files", "L2 MEMORY.md", "L3 graph"} {
		require.Contains(t, dom, `data-lane="`+lane+`"`)
	}
	// 4 kept versions of L1 files (2 of the workflow state, the restore, the
	// outcome, the resolution = 5), 1 rejected, 2 decisions.
	events := regexp.MustCompile(`<button[^>]*data-event="`).FindAllString(dom, -1)
	require.Len(t, events, 8, "one focusable button per event")
	require.Contains(t, dom, `data-events="8"`)
	require.Regexp(t, `class="m ev rejected"[^>]*aria-label="rejected update \.claude/workflow-state\.json at 2026-11-22T10:30:00Z \(record\)"`, dom)
	require.Regexp(t, `class="m ev decision-resolved"[^>]*aria-label="decision D-001 resolved: rotate \(rotate refresh tokens\?\)"`, dom)
	require.Regexp(t, `class="m ev decision-pending"[^>]*aria-label="decision D-002 pending \(rename the package\?\)"`, dom)
	require.Regexp(t, `class="m ev restore"[^>]*aria-label="update \.claude/workflow-state\.json at 2026-11-22T13:00:00Z \(restore\)"`, dom)
	require.Regexp(t, `class="m span"[^>]*>reproduce</button>`, dom)
	require.Regexp(t, `class="m span"[^>]*>fix</button>`, dom)
	// #ev-1 opened the second event's diff: the phase moving to "fix".
	require.Regexp(t, `<h2 id="detail-title">update \.claude/workflow-state\.json at 2026-11-22T10:00:00Z \(record\)</h2>`, dom)
	require.Contains(t, dom, `+{"type": "DEBUG", "phase": "fix"`)

	shot := filepath.Join(t.TempDir(), "timeline.png")
	headless(t, bin, "file://"+page, "--screenshot="+shot, "--window-size=1280,800")
	png, err := os.ReadFile(shot)
	require.NoError(t, err)
	require.Greater(t, len(png), 1000)
	require.Equal(t, "\x89PNG", string(png[:4]))
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}

// TestTimelineDenseInBrowser renders a generated history of 10 000 events
// and 1 000 phase spans and checks that the page stays small and that
// Chromium shows dense lanes, the phases lane too, as count markers that
// add up to every event and span.
func TestTimelineDenseInBrowser(t *testing.T) {
	bin := chromiumBin(t)
	tl := generated(10000)
	const spans = 1000
	tl.Spans = nil
	for i := 0; i < spans; i++ {
		at := tl.From.Add(time.Duration(i) * 10 * time.Minute)
		tl.Spans = append(tl.Spans, timeline.Span{Label: fmt.Sprintf("phase-%d", i%3), Start: at, End: at.Add(10 * time.Minute)})
	}
	var buf bytes.Buffer
	require.NoError(t, timeline.Render(&buf, tl))
	t.Logf("page for %d events: %d bytes", len(tl.Events), buf.Len())
	require.Less(t, buf.Len(), 8<<20)
	page := filepath.Join(t.TempDir(), "dense.html")
	require.NoError(t, os.WriteFile(page, buf.Bytes(), 0o644))
	dom := string(headless(t, bin, "file://"+page, "--dump-dom"))
	require.Contains(t, dom, `data-ready="true"`)
	buttons := regexp.MustCompile(`<button[^>]*class="m `).FindAllString(dom, -1)
	require.Less(t, len(buttons), 600, "dense lanes are aggregated")
	total := 0
	for _, m := range regexp.MustCompile(`data-bucket="\d+">(\d+)</button>`).FindAllStringSubmatch(dom, -1) {
		var n int
		fmt.Sscan(m[1], &n)
		total += n
	}
	total += len(regexp.MustCompile(`data-event="`).FindAllString(dom, -1))
	require.Equal(t, 10000+spans, total, "every event and span is counted once")
	require.Contains(t, dom, `data-dense="true"`)
	require.Contains(t, dom, `data-lane="workflow phases" data-count="1000" data-dense="true"`)
	require.NotContains(t, dom, `class="m span"`, "no span drawn one by one")
	require.Regexp(t, `class="m bucket"[^>]*aria-label="\d+ phases in workflow phases from `, dom)
	// A bucket's spans follow the events in the data block: the first one,
	// opened, shows its phase and no diff.
	dom = string(headless(t, bin, "file://"+page+"#ev-10000", "--dump-dom"))
	require.Contains(t, dom, `<h2 id="detail-title">phase phase-0 from 2026-11-01T00:00:00Z to 2026-11-01T00:10:00Z</h2>`)
	require.NotContains(t, dom, `id="detail-diff"`)
}

// generated is a history of n events spread over the lanes, a week long.
func generated(n int) *timeline.Timeline {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	t := &timeline.Timeline{Lanes: []string{timeline.LanePhases, timeline.LaneDecisions, timeline.LaneL1, timeline.LaneL2, timeline.LaneL3, "session s1"}}
	lanes := []string{timeline.LaneL1, timeline.LaneL1, timeline.LaneL2, timeline.LaneL3, "session s1"}
	for i := 0; i < n-3; i++ {
		kind := timeline.KindUpdate
		if i%97 == 0 {
			kind = timeline.KindRejected
		}
		p := fmt.Sprintf("file-%d.json", i%7)
		t.Events = append(t.Events, timeline.Event{Lane: lanes[i%len(lanes)], Time: start.Add(time.Duration(i) * time.Minute), Kind: kind, Path: p,
			Label:  fmt.Sprintf("update %s #%d", p, i),
			Detail: fmt.Sprintf("--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-{\"n\": %d}\n+{\"n\": %d}\n", p, p, i, i+1)})
	}
	for i := 0; i < 3; i++ {
		t.Events = append(t.Events, timeline.Event{Lane: timeline.LaneDecisions, Time: start.Add(time.Duration(i) * time.Hour), Kind: timeline.KindPending,
			Label: fmt.Sprintf("decision D-%03d pending", i)})
	}
	t.Spans = []timeline.Span{{Label: "plan", Start: start, End: start.Add(48 * time.Hour)}, {Label: "build", Start: start.Add(48 * time.Hour), End: start.Add(time.Duration(n) * time.Minute)}}
	t.From, t.To = start, start.Add(time.Duration(n)*time.Minute)
	return t
}

// TestTimelinePolicyInBrowser: under the page's policy its own script runs
// and a script or an event handler that got into the page (an escaping
// mistake, say) does not. The same page with the policy it had before,
// script-src 'unsafe-inline', runs both: the check can see them run.
func TestTimelinePolicyInBrowser(t *testing.T) {
	bin := chromiumBin(t)
	var buf bytes.Buffer
	require.NoError(t, timeline.Render(&buf, generated(50)))
	const injected = `<script>document.body.setAttribute("data-injected-script", "ran")</script>` +
		`<img src="data:," onerror="document.body.setAttribute('data-injected-handler', 'ran')">` + "\n</body>"
	strict := strings.Replace(buf.String(), "\n</body>", injected, 1)
	require.Contains(t, strict, `data-injected-script`)
	meta := `content="` + timeline.Policy() + `"`
	require.Contains(t, strict, meta)
	loose := strings.Replace(strict, meta, `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"`, 1)

	dir := t.TempDir()
	for name, page := range map[string]string{"strict.html": strict, "loose.html": loose} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(page), 0o644))
	}
	// body is the <body> tag after the scripts ran: what they set on it.
	body := func(dom string) string { return regexp.MustCompile(`<body[^>]*>`).FindString(dom) }
	dom := string(headless(t, bin, "file://"+filepath.Join(dir, "strict.html")+"#ev-3", "--dump-dom"))
	require.Contains(t, body(dom), `data-ready="true"`, "the page's own script ran")
	require.Regexp(t, `<h2 id="detail-title">update file-3\.json #3</h2>`, dom, "#ev-3 opened its event")
	require.NotContains(t, body(dom), `data-injected-script`, "an injected script ran")
	require.NotContains(t, body(dom), `data-injected-handler`, "an injected event handler ran")

	dom = string(headless(t, bin, "file://"+filepath.Join(dir, "loose.html"), "--dump-dom"))
	require.Contains(t, body(dom), `data-ready="true"`)
	require.Contains(t, body(dom), `data-injected-script="ran"`, "with 'unsafe-inline' the injected script runs")
	require.Contains(t, body(dom), `data-injected-handler="ran"`, "with 'unsafe-inline' the injected handler runs")
}

// TestTimelineServeInBrowser: a page of another site (on 127.0.0.2) that
// points <img> and <iframe> tags at the served timeline (the token
// included) gets each refused and builds nothing (attack22 O-4: sixty such tags ran strata-serve to
// 587 MB); the timeline opened from the address bar is served, built once,
// and its script runs under the served policy.
func TestTimelineServeInBrowser(t *testing.T) {
	bin := chromiumBin(t)
	var (
		mu     sync.Mutex
		builds int
		codes  = map[int]int{}
	)
	page := web.Page{
		Build: func() (*timeline.Timeline, error) {
			mu.Lock()
			builds++
			mu.Unlock()
			return generated(50), nil
		},
		Heads: func() (string, error) { return "unchanged", nil },
	}
	token := web.Token()
	h := web.Handler(page, token)
	timelineURL := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		mu.Lock()
		codes[rec.code]++
		mu.Unlock()
	})) + "?t=" + token
	var tags strings.Builder
	for i := range 6 {
		fmt.Fprintf(&tags, `<img src="%s&amp;n=%d" alt="">`, timelineURL, i)
	}
	fmt.Fprintf(&tags, `<iframe src="%s"></iframe>`, timelineURL)
	other := listen(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html><title>another site</title><body>%s</body>", tags.String())
	}))

	headless(t, bin, other, "--dump-dom")
	mu.Lock()
	t.Logf("answers to the other site's page: %v", codes)
	require.Equal(t, 0, builds, "another site's requests built the page")
	require.Greater(t, codes[http.StatusForbidden], 0, "the other site's requests reached the server: %v", codes)
	require.Equal(t, 0, codes[http.StatusOK], "another site's request was served: %v", codes)
	mu.Unlock()

	dom := string(headless(t, bin, timelineURL+"#ev-3", "--dump-dom"))
	require.Regexp(t, `<body[^>]*data-ready="true"`, dom, "the page's script ran under the served policy")
	require.Regexp(t, `<h2 id="detail-title">update file-3\.json #3</h2>`, dom)
	mu.Lock()
	require.Equal(t, 1, builds)
	require.Greater(t, codes[http.StatusOK], 0)
	mu.Unlock()
}

// listen serves h on addr until the test ends and returns its URL.
func listen(t *testing.T, addr string, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// statusRecorder notes the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}
