package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/layers"
	"github.com/strata-dev/strata/state"
)

// repo makes a git repository with one recorded workflow state.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "base"}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".claude/workflow-state.json"),
		[]byte(`{"type": "APEX", "phase": "plan", "ttl": "36500d", "lastUpdated": "2026-11-22T09:00:00Z"}`), 0o644))
	recordAll(t, dir, time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	return dir
}

// recordAll records every kept file of dir at now.
func recordAll(t *testing.T, dir string, now time.Time) {
	t.Helper()
	eng, err := engine.Open(dir)
	require.NoError(t, err)
	eng.Now = func() time.Time { return now }
	paths, err := eng.AllPaths()
	require.NoError(t, err)
	_, err = eng.Record(paths, state.SourceRecord)
	require.NoError(t, err)
}

// connect runs the server on an in-memory transport and returns the SDK's
// own client session.
func connect(t *testing.T, dir string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	now := func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
	srv := New(Options{Dir: dir, Now: now, Version: "test"})
	go func() { _ = srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestToolsAreReadOnlyWithSchemas(t *testing.T) {
	cs := connect(t, repo(t))
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		require.Regexp(t, valid, tool.Name)
		require.NotNil(t, tool.Annotations, tool.Name)
		require.True(t, tool.Annotations.ReadOnlyHint, tool.Name)
		require.NotNil(t, tool.InputSchema, tool.Name)
	}
	require.ElementsMatch(t, []string{"strata_log", "strata_show", "strata_diff", "strata_blame", "strata_at",
		"strata_resume", "strata_decisions", "strata_validate"}, names)
}

func TestShowAndErrors(t *testing.T) {
	cs := connect(t, repo(t))
	ctx := context.Background()
	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	}
	res, err := call("strata_show", map[string]any{"path": ".claude/workflow-state.json", "at": "1h ago"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, `"phase": "plan"`)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"path":".claude/workflow-state.json"`)

	_, err = call("strata_nope", nil)
	require.Error(t, err, "an unknown tool is a protocol error")

	for _, bad := range []map[string]any{
		{"path": "../x.json"},
		{"path": 7},
		{"path": ".claude/workflow-state.json", "at": "whenever"},
		{"path": ".claude/workflow-state.json", "at": "2020-01-01T00:00:00Z"},
	} {
		res, err = call("strata_show", bad)
		require.NoError(t, err, "%v", bad)
		require.True(t, res.IsError, "%v", bad)
	}

	// still serving
	res, err = call("strata_at", map[string]any{})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "workflow: APEX, phase plan")
}

// TestLogLimitOneLine: a limit the schema lets through and an int does not
// hold is one line naming the argument, not the decoder's text naming
// mcpserver.logIn (attack24 G4); a whole number written 1.0 or 1e1 is read.
func TestLogLimitOneLine(t *testing.T) {
	cs := connect(t, repo(t))
	ctx := context.Background()
	for args, want := range map[string]string{
		`{"limit": 99999999999999999999}`:  "limit: too large (at most 9007199254740992)",
		`{"limit": 1e20}`:                  "limit: too large (at most 9007199254740992)",
		`{"limit": 9223372036854775807}`:   "limit: too large (at most 9007199254740992)",
		`{"limit": -99999999999999999999}`: "limit: must not be negative",
		`{"limit": -1}`:                    "limit: must not be negative",
		`{"limit": 1.0}`:                   "",
		`{"limit": 1e1}`:                   "",
		`{"limit": 9007199254740992}`:      "",
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "strata_log", Arguments: json.RawMessage(args)})
		require.NoError(t, err, args)
		text := res.Content[0].(*mcp.TextContent).Text
		if want == "" {
			require.False(t, res.IsError, "%s: %s", args, text)
			require.Contains(t, text, ".claude/workflow-state.json", args)
			continue
		}
		require.True(t, res.IsError, args)
		require.Equal(t, want, text, args)
	}
}

// BenchmarkShow measures strata_show once the server runs (the issue's
// target: under 10 ms).
func BenchmarkShow(b *testing.B) {
	dir := b.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		b.Fatalf("%s", out)
	}
	_ = os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, ".claude/workflow-state.json"), []byte(`{}`), 0o644)
	eng, err := engine.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	paths, _ := eng.AllPaths()
	if _, err := eng.Record(paths, state.SourceRecord); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = New(Options{Dir: dir}).Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "strata_show", Arguments: map[string]any{"path": ".claude/workflow-state.json"}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// At most toolSlots tool calls run at once; the others wait for a slot
// (one call may hold hundreds of times a big file's size: four diffs at
// once ran the server out of memory). Five calls are started while the
// first ones are held inside; only two get in until they are let go.
func TestToolCallsTakeSlots(t *testing.T) {
	cs := connect(t, repo(t))
	entered := make(chan string, 10)
	release := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	toolEntered = func(name string) {
		entered <- name
		<-release
	}
	defer func() { let(); toolEntered = nil }() // the held calls go on, also after a failure

	done := make(chan error, 5)
	for range 5 {
		go func() {
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strata_resume", Arguments: map[string]any{}})
			done <- err
		}()
	}
	for range toolSlots {
		<-entered
	}
	select {
	case name := <-entered:
		t.Fatalf("a third call (%s) ran while two held their slots", name)
	case <-time.After(300 * time.Millisecond): // none comes: the check is that it does not, not how fast
	}
	let()
	for range 5 - toolSlots {
		<-entered
	}
	for range 5 {
		require.NoError(t, <-done)
	}
}

// The text of a tool result is the report the command line prints: recorded
// text a terminal would act on (escape sequences, a carriage return, bidi
// controls — state files and MEMORY.md lines may come from a remote) is
// quoted there as it is on the command line, never passed through. The
// structured content keeps the values (JSON escapes them).
func TestTextResultsAreQuoted(t *testing.T) {
	dir := repo(t)
	hostile := `plan\u001b]0;OWNED\u0007\u001b[2J\r\u202eRLO`
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".claude/workflow-state.json"),
		[]byte(`{"type": "APEX", "phase": "`+hostile+`", "context": "`+hostile+`", "ttl": "36500d", "lastUpdated": "2026-11-22T09:00:00Z"}`), 0o644))
	mem := filepath.Join(dir, ".claude/memory/MEMORY.md")
	require.NoError(t, os.MkdirAll(filepath.Dir(mem), 0o755))
	require.NoError(t, os.WriteFile(mem, []byte("# M\r\n\r\n- a\x1b]0;OWNED\x07\x1b[2J\r b \u202eRLO\r\n"), 0o644))
	eng, err := engine.Open(dir)
	require.NoError(t, err)
	eng.Now = func() time.Time { return time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC) }
	paths, err := eng.AllPaths()
	require.NoError(t, err)
	_, err = eng.Record(paths, state.SourceRecord)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mem, []byte("# M\r\n\r\n- a\x1b]0;OWNED\x07\x1b[2J\r b \u202eRLO\r\n- \x1b[31mred\r\n"), 0o644))

	cs := connect(t, dir)
	raw := regexp.MustCompile("[\x00-\x09\x0b-\x0c\x0e-\x1f\x7f\u0080-\u009f\u202e]|\r[^\n]")
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"strata_at", map[string]any{}, `\x1b]0;OWNED\a`},
		{"strata_resume", map[string]any{}, `\x1b]0;OWNED\a`},
		{"strata_blame", map[string]any{"path": ".claude/memory/MEMORY.md"}, `\x1b]0;OWNED\a`},
		{"strata_blame", map[string]any{"path": ".claude/workflow-state.json"}, `/phase: "plan\u001b]0;OWNED\u0007\u001b[2J\r\u202eRLO"` + "\n"}, // quoted once (attack24 G5)
		{"strata_diff", map[string]any{"path": ".claude/memory/MEMORY.md"}, `+"- \x1b[31mred\r"`},
		{"strata_diff", map[string]any{"path": ".claude/workflow-state.json", "from": "@{0}", "to": "HEAD~0", "keys": true}, ""},
		{"strata_log", map[string]any{}, "add    .claude/memory/MEMORY.md"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		require.NoError(t, err, c.tool)
		text := res.Content[0].(*mcp.TextContent).Text
		require.False(t, raw.MatchString(text), "%s %v: raw control in text:\n%q", c.tool, c.args, text)
		require.Contains(t, text, c.want, "%s %v", c.tool, c.args)
	}
}

// strata_resume on a workflow state past its TTL says so and what `strata
// resume` would do, by the same judgement the CLI's expiry uses, instead
// of "continue the … workflow"; it expires nothing (attack27 F4).
func TestResumePastTTL(t *testing.T) {
	dir := repo(t)
	wf := filepath.Join(dir, ".claude/workflow-state.json")
	stale := []byte(`{"type": "APEX", "phase": "build", "ttl": "1h", "lastUpdated": "2026-11-22T09:00:00Z"}` + "\n")
	require.NoError(t, os.WriteFile(wf, stale, 0o644))
	head := func() string {
		out, err := exec.Command("git", "-C", dir, "rev-parse", "refs/strata/state").Output()
		require.NoError(t, err)
		return string(out)
	}
	before := head()

	cs := connect(t, dir) // now: 12:00, two hours past the deadline
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strata_resume", Arguments: map[string]any{}})
	require.NoError(t, err)
	text := res.Content[0].(*mcp.TextContent).Text
	require.Contains(t, text, "the APEX workflow at build is past its TTL (deadline 2026-11-22T10:00:00Z): strata resume would expire it")
	require.NotContains(t, text, "continue the APEX workflow")
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.Contains(t, string(data), `"past_ttl":"2026-11-22T10:00:00Z"`)
	got, err := os.ReadFile(wf)
	require.NoError(t, err)
	require.Equal(t, stale, got, "the server expired nothing")
	require.Equal(t, before, head(), "the server recorded nothing")

	// the CLI's judgement agrees: a resume at that moment expires it
	eng, err := engine.Open(dir)
	require.NoError(t, err)
	eng.Now = func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
	x, _, err := layers.New(eng, nil).Expire(state.SourceRecord)
	require.NoError(t, err)
	require.NotNil(t, x)

	// within the TTL: continue, and no word of it
	require.NoError(t, os.WriteFile(wf, []byte(`{"type": "APEX", "phase": "build", "ttl": "1h", "lastUpdated": "2026-11-22T11:30:00Z"}`+"\n"), 0o644))
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strata_resume", Arguments: map[string]any{}})
	require.NoError(t, err)
	text = res.Content[0].(*mcp.TextContent).Text
	require.Contains(t, text, "continue the APEX workflow: entering build")
	require.NotContains(t, text, "past its TTL")
}

// strata_at past the TTL says what a resume then would have done, in place
// of "continue the … workflow" (which would send an agent on with a stale
// workflow), and for a completed workflow too: a resume expires both.
func TestAtPastTTL(t *testing.T) {
	for _, tc := range []struct{ name, doc, instead string }{
		{"active", `{"type": "APEX", "phase": "build", "ttl": "1h", "lastUpdated": "2026-11-22T09:30:00Z"}`, "continue the APEX workflow"},
		{"completed", `{"type": "APEX", "phase": "build", "status": "completed", "completedAt": "2026-11-22T09:30:00Z", "ttl": "1h", "lastUpdated": "2026-11-22T09:30:00Z"}`, "start a new one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repo(t)
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".claude/workflow-state.json"), []byte(tc.doc+"\n"), 0o644))
			recordAll(t, dir, time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC))

			cs := connect(t, dir) // now: 12:00, past the 10:30 deadline
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strata_at", Arguments: map[string]any{}})
			require.NoError(t, err)
			text := res.Content[0].(*mcp.TextContent).Text
			require.Contains(t, text, "the APEX workflow was past its TTL (deadline 2026-11-22T10:30:00Z): a resume then would have expired it")
			require.NotContains(t, text, tc.instead)
		})
	}
}

// strata_resume quotes a 200 000-character context cut at 200 characters,
// in its text and its structured content, and says where the whole state
// is: an agent reads both as context.
func TestResumeLongContextBounded(t *testing.T) {
	dir := repo(t)
	long := strings.Repeat("C", 200000)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".claude/workflow-state.json"),
		[]byte(`{"type": "APEX", "phase": "build", "ttl": "36500d", "context": "`+long+`", "lastUpdated": "2026-11-22T11:00:00Z"}`+"\n"), 0o644))
	cs := connect(t, dir)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strata_resume", Arguments: map[string]any{}})
	require.NoError(t, err)
	text := res.Content[0].(*mcp.TextContent).Text
	require.Less(t, len(text), 2000, "%.300q", text)
	require.Contains(t, text, "context: "+strings.Repeat("C", 200)+"…\n")
	require.Contains(t, text, "the whole state: .claude/workflow-state.json")
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.Less(t, len(data), 2000, "%.300s", data)
	require.Contains(t, string(data), `"whole_state":".claude/workflow-state.json"`)
}

// A tool error quotes at most about 1 KB of what was sent: its start and
// end, and how many bytes it left out (attack27 F5: a 16 MB path came back
// whole).
func TestToolErrorQuotesBounded(t *testing.T) {
	cs := connect(t, repo(t))
	long := ".claude/" + strings.Repeat("é", 1<<20) + ".json"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strata_show", Arguments: map[string]any{"path": long}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	text := res.Content[0].(*mcp.TextContent).Text
	require.LessOrEqual(t, len(text), maxErrorText+64, "%.200q", text)
	require.True(t, utf8.ValidString(text))
	require.Regexp(t, `^.*\.claude/é+… \[[0-9]+ bytes cut\] …é+\.json.*$`, text)

	short, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strata_show", Arguments: map[string]any{"path": ".claude/nope.txt"}})
	require.NoError(t, err)
	require.NotContains(t, short.Content[0].(*mcp.TextContent).Text, "bytes cut")
}

// TestValidateNamesBadFileNames: a file a rule would keep but for a control
// character in its name is invalid, as the command line's validate says,
// in a whole check and when named (attack34b F4: "0 files checked, 0
// invalid").
func TestValidateNamesBadFileNames(t *testing.T) {
	dir := repo(t)
	bad := "PhaseOutputs/s\x1b[2J/phase-01-query.json"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(bad)), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, bad), []byte(`{"bad": true}`), 0o644))
	cs := connect(t, dir)
	for _, args := range []map[string]any{{}, {"paths": []string{bad}}} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "strata_validate", Arguments: args})
		require.NoError(t, err)
		text := res.Content[0].(*mcp.TextContent).Text
		require.Contains(t, text, `"PhaseOutputs/s\x1b[2J/phase-01-query.json": /: file name contains a control character`, "%v", args)
		require.NotContains(t, text, "\x1b", "%v", args)
		require.Regexp(t, `checked, [1-9]\d* invalid`, text, "%v", args)
	}
}
