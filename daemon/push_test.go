package daemon

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/internal/syncbuf"
)

// The watcher takes a push into this repository (it is another machine's
// sync remote) without waiting for an edit of a kept file here (attack39b
// F4: it took none until a kept file changed).
//
// The files one push wrote are logged in one line, not a line each (a
// sync's push of 300 files logged 300 lines).
func TestWatcherTakesPushWithoutEdit(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, ".claude/c.json", `{"v": 1}`)
	write(t, eng, ".claude/d.json", `{"v": 1}`)
	var problems, logged syncbuf.Buffer
	startOpts(t, eng, Options{Debounce: 20 * time.Millisecond, Rescan: time.Hour, Problems: &problems,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	waitFor(t, "the catch-up's record", func() bool { h, _ := eng.Head(); return h != "" })
	pushFiles(t, eng, [2]string{".claude/c.json", `{"v": "pushed"}`}, [2]string{".claude/d.json", `{"v": "pushed"}`})
	waitFor(t, "the pushed c.json and d.json written", func() bool {
		c, _ := os.ReadFile(eng.Config().Abs(".claude/c.json"))
		d, _ := os.ReadFile(eng.Config().Abs(".claude/d.json"))
		return string(c) == `{"v": "pushed"}` && string(d) == `{"v": "pushed"}`
	})
	waitFor(t, "the push logged", func() bool { return strings.Contains(logged.String(), "took a push") })
	var lines []string
	for _, l := range strings.Split(logged.String(), "\n") {
		if strings.Contains(l, "push into this repository") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `wrote=".claude/c.json .claude/d.json"`) {
		t.Fatalf("the push is logged as %q, want one line naming both files", lines)
	}
}

// The idle watcher puts back a state ref deleted from outside strata (a
// push, or git update-ref -d) without waiting for an edit (attack39c N3:
// a deleted ref's empty head read as the head looked at already).
func TestWatcherPutsBackDeletedRef(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, ".claude/c.json", `{"v": 1}`)
	var problems syncbuf.Buffer
	start(t, eng, &problems)
	waitFor(t, "the catch-up's record", func() bool { h, _ := eng.Head(); return h != "" })
	first, _ := eng.Head()
	// a second move: a ref deleted right after strata made it from nothing
	// reads as that first move killed before its rename (left alone)
	write(t, eng, ".claude/c.json", `{"v": 2}`)
	waitFor(t, "the edit's record", func() bool { h, _ := eng.Head(); return h != first })
	head, _ := eng.Head()
	if out, err := exec.Command("git", "-C", eng.Config().Root, "update-ref", "-d", eng.StateRef()).CombinedOutput(); err != nil {
		t.Fatalf("git update-ref -d: %v: %s", err, out)
	}
	waitFor(t, "the ref put back", func() bool { h, _ := eng.Head(); return h == head })
}

// pushFiles moves the state ref as another machine's sync pushing into
// this repository does: a commit over its head for each (path, content),
// content written as it is, in one move.
func pushFiles(t *testing.T, eng *engine.Engine, files ...[2]string) {
	t.Helper()
	root := eng.Config().Root
	git := func(stdin string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), append(env, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	head, err := eng.Head()
	if err != nil {
		t.Fatal(err)
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	git("", index, "read-tree", head)
	pushed := head
	for _, f := range files {
		k, ok := eng.Config().Classify(f[0])
		if !ok {
			t.Fatalf("%s is not kept", f[0])
		}
		blob := git(f[1], nil, "hash-object", "-w", "--stdin")
		git("", index, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+f[0])
		tree := git("", index, "write-tree")
		msg := "update " + f[0] + "\n\nStrata-Path: " + f[0] + "\nStrata-Action: update\nStrata-Class: " + string(k.Class) + "\nStrata-Source: record\nStrata-Time: 2026-11-22T12:00:00.000000000Z\n"
		pushed = git(msg, nil, "commit-tree", tree, "-p", pushed)
	}
	git("", nil, "update-ref", eng.StateRef(), pushed)
}
