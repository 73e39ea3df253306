package timeline

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
)

const memoryMD = ".claude/memory/MEMORY.md"

// pushed makes a repository whose state ref holds n versions of the kept
// file p, version i being version(i), one commit each a second apart,
// written with git fast-import as a remote's history can be (attack22-out
// O-3), and opens it.
func pushed(t *testing.T, p string, n int, version func(i int) string) *engine.Engine {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, config.FileName), []byte("# defaults\n"), 0o644))
	cfg, err := config.Load(dir)
	require.NoError(t, err)
	k, ok := cfg.Classify(p)
	require.True(t, ok, "%s is not kept", p)
	var in bytes.Buffer
	marks := map[string]int{} // each version's blob, written once
	start := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		v := version(i)
		mark, ok := marks[v]
		if !ok {
			mark = len(marks) + 1
			marks[v] = mark
			fmt.Fprintf(&in, "blob\nmark :%d\ndata %d\n%s\n", mark, len(v), v)
		}
		at := start.Add(time.Duration(i) * time.Second)
		msg := fmt.Sprintf("update %s\n\nStrata-Path: %s\nStrata-Action: update\nStrata-Class: %s\nStrata-Source: watch\nStrata-Schema: %s\nStrata-Time: %s\n",
			p, p, k.Class, k.Schema, at.Format(time.RFC3339Nano))
		fmt.Fprintf(&in, "commit refs/strata/state\ncommitter strata <strata@localhost> %d +0000\ndata %d\n%s\nM 100644 :%d %s\n",
			at.Unix(), len(msg), msg, mark, p)
	}
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v: %s", err, out)
	}
	e, err := engine.Open(dir)
	require.NoError(t, err)
	return e
}

// reads counts the versions Build reads, and those it decodes.
type reads struct {
	*engine.Engine
	n, decoded int
}

func (r *reads) Decode(commit, path string) ([]any, error) {
	r.decoded++
	return r.Engine.Decode(commit, path)
}

func (r *reads) FileAt(commit, path string) ([]byte, error) {
	r.n++
	return r.Engine.FileAt(commit, path)
}

// A history going back and forth between two 400-line versions: each diff
// is cut at MaxDiff, and once the next would take the page's past
// MaxDiffs, that event and every later one carry the command that prints
// its diff, and Build reads no more versions. The page says where the
// diffs stop and how to see them.
func TestBuildStopsAtMaxDiffs(t *testing.T) {
	var a, b strings.Builder
	for j := 0; j < 400; j++ {
		fmt.Fprintf(&a, "- a line %d %s\n", j, strings.Repeat("y", 50))
		fmt.Fprintf(&b, "- b line %d %s\n", j, strings.Repeat("z", 50))
	}
	const n = 600
	e := pushed(t, memoryMD, n, func(i int) string { return []string{a.String(), b.String()}[i%2] })
	src := &reads{Engine: e}
	tl, err := Build(src, Options{})
	require.NoError(t, err)
	require.Len(t, tl.Events, n)

	embedded, shown := 0, 0
	for i, ev := range tl.Events {
		if ev.Time.Before(tl.Cut) {
			require.True(t, strings.HasPrefix(ev.Detail, "--- "), "event %d: %q", i, ev.Detail)
			embedded += len(ev.Detail)
			shown++
			continue
		}
		require.Equal(t, fmt.Sprintf("diff left out of this page; see it with: strata diff .claude/memory/MEMORY.md --from %s --to %s\n",
			tl.Events[i-1].Commit, ev.Commit), ev.Detail, "event %d", i)
	}
	require.LessOrEqual(t, embedded, MaxDiffs)
	require.Greater(t, embedded+MaxDiff, MaxDiffs, "the diffs stop only when the next one does not fit")
	require.Equal(t, n-shown, tl.LeftOut)
	require.Equal(t, tl.Events[shown].Time, tl.Cut)
	require.LessOrEqual(t, src.n, shown+2, "versions read: the shown events', the first one's parent and the one that did not fit")

	var page bytes.Buffer
	require.NoError(t, Render(&page, tl))
	require.Less(t, page.Len(), MaxDiffs+n*400)
	cut := CutStamp(tl.Cut)
	require.Contains(t, page.String(), fmt.Sprintf("The diffs of the %d events from %s on are left out: a page embeds at most 10 000 diffs, 2 MiB in all, from 256 MiB of versions read.", tl.LeftOut, cut))
	require.Contains(t, page.String(), "<code>strata timeline --since "+cut+"</code>")

	// The page --since the cut starts there, with the diffs left out before.
	next, err := Build(e, Options{Since: tl.Cut})
	require.NoError(t, err)
	require.Equal(t, tl.LeftOut, len(next.Events))
	require.Equal(t, tl.Events[shown].Commit, next.Events[0].Commit)
	require.True(t, strings.HasPrefix(next.Events[0].Detail, "--- "))
}

// A history of more than MaxDiffEvents small changes: the first
// MaxDiffEvents events carry their diff, the rest the command.
func TestBuildStopsAtMaxDiffEvents(t *testing.T) {
	const n = MaxDiffEvents + 20
	e := pushed(t, memoryMD, n, func(i int) string { return fmt.Sprintf("# M\n\n- %d\n", i) })
	src := &reads{Engine: e}
	tl, err := Build(src, Options{})
	require.NoError(t, err)
	require.Equal(t, 20, tl.LeftOut)
	require.Equal(t, tl.Events[MaxDiffEvents].Time, tl.Cut)
	require.Contains(t, tl.Events[MaxDiffEvents-1].Detail, fmt.Sprintf("+- %d\n", MaxDiffEvents-1))
	require.True(t, strings.HasPrefix(tl.Events[MaxDiffEvents].Detail, "diff left out of this page; see it with: strata diff "))
	require.LessOrEqual(t, src.n, MaxDiffEvents+2)
}

// Versions of one long line: each diff is cut to its header, so the page
// grows little, but each is read whole; the diffs stop once the versions
// read pass MaxDiffRead.
func TestBuildStopsAtMaxDiffRead(t *testing.T) {
	const size = 1 << 20
	a, b := strings.Repeat("a", size-1)+"\n", strings.Repeat("b", size-1)+"\n"
	n := MaxDiffRead/size + 20
	e := pushed(t, memoryMD, n, func(i int) string { return []string{a, b}[i%2] })
	src := &reads{Engine: e}
	tl, err := Build(src, Options{})
	require.NoError(t, err)
	shown := MaxDiffRead / size // the first version was read alone, with no parent
	require.Equal(t, n-shown, tl.LeftOut)
	require.Equal(t, tl.Events[shown].Time, tl.Cut)
	require.True(t, strings.HasPrefix(tl.Events[shown-1].Detail, "--- "))
	require.True(t, strings.HasPrefix(tl.Events[shown].Detail, "diff left out of this page; see it with: strata diff "))
	require.LessOrEqual(t, src.n, shown+2)
}

// A workflow state going back and forth between two long phases: a span
// each, its label cut after MaxPhase bytes, so the page stays small; each
// of the two versions is decoded once.
func TestBuildCutsLongPhases(t *testing.T) {
	long := func(c string) string { return strings.Repeat(c, 10_000) + "é" }
	e := pushed(t, ".claude/workflow-state.json", 40, func(i int) string {
		return fmt.Sprintf(`{"type": "APEX", "phase": %q, "lastUpdated": "2026-11-22T10:30:00Z"}`+"\n", long([]string{"a", "b"}[i%2]))
	})
	src := &reads{Engine: e}
	tl, err := Build(src, Options{})
	require.NoError(t, err)
	require.Equal(t, 2, src.decoded, "each of the two versions decoded once")
	require.Len(t, tl.Spans, 40)
	require.Equal(t, strings.Repeat("a", MaxPhase)+"…", tl.Spans[0].Label)
	require.Equal(t, strings.Repeat("b", MaxPhase)+"…", tl.Spans[1].Label)
	var page bytes.Buffer
	require.NoError(t, Render(&page, tl))
	require.Less(t, page.Len(), 200<<10)

	require.Equal(t, "plan", phaseLabel("plan"))
	require.Equal(t, strings.Repeat("x", MaxPhase-1)+"…", phaseLabel(strings.Repeat("x", MaxPhase-1)+"éé"), "cut before a character that does not fit whole")
	require.Equal(t, strings.Repeat("x", MaxPhase-2)+"é", phaseLabel(strings.Repeat("x", MaxPhase-2)+"é"), "MaxPhase bytes, whole")
}
