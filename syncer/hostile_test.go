package syncer

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// rawEntry is one entry of a tree written byte for byte, however hostile.
type rawEntry struct{ mode, name, id string }

// writeRawTree writes a tree object exactly as given (no sorting, no
// checks) into the repository at dir and returns its id.
func writeRawTree(tb testing.TB, dir string, entries ...rawEntry) string {
	tb.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		id, err := hex.DecodeString(e.id)
		if err != nil {
			tb.Fatal(err)
		}
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(id)
	}
	cmd := exec.Command("git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	cmd.Stdin = &b
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("hash-object: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func blobIn(tb testing.TB, dir, content string) string {
	tb.Helper()
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	cmd.Stdin = strings.NewReader(content)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// A remote head whose tree holds an entry git or strata refuses is refused
// whole, with one line naming the entry: the local state ref, the kept
// files and the tracking ref stay as they were, in the fast-forward case
// and the merge case alike, and nothing outside the work tree is written
// (issue 16.2).
func TestSyncRefusesUnsafeRemoteTree(t *testing.T) {
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(".claude/settings.json", `{"n": 1}`+"\n")
	a.record()
	a.sync()
	pushed := git(t, a.dir, "rev-parse", "refs/strata/state")
	good := blobIn(t, w.remote, `{"n": 2}`+"\n")
	cases := []struct {
		entry rawEntry
		want  string
	}{
		{rawEntry{"100644", "..", good}, `".." path element`},
		{rawEntry{"100644", ".", good}, `"." path element`},
		{rawEntry{"100644", ".git", good}, ".git path element"},
		{rawEntry{"100644", ".GIT", good}, ".git path element"},
		{rawEntry{"100644", "git~1", good}, ".git path element"},
		{rawEntry{"100644", ".git. .", good}, ".git path element"},
		{rawEntry{"100644", ".git::$INDEX_ALLOCATION", good}, ".git path element"},
		// named quoted, as the sync report names it: never the raw zero width
		{rawEntry{"100644", ".g\u200cit", good}, `entry ".claude/.g\u200cit": .git path element`},
		{rawEntry{"100644", ".gi\u202et", good}, `entry ".claude/.gi\u202et": .git path element`},
		{rawEntry{"100644", "/abs.json", good}, "name holds a slash"},
		{rawEntry{"100644", "../../x.json", good}, "name holds a slash"},
		{rawEntry{"100644", `..\..\x.json`, good}, "backslash-separated"},
		{rawEntry{"120000", "link.json", good}, "symbolic link"},
		{rawEntry{"160000", "mod.json", pushed}, "gitlink"}, // sorted before settings.json: an unsorted tree is git fsck's to refuse
		{rawEntry{"100664", "grp.json", good}, "mode 100664"},
		// a name with white space at its start is quoted, so it shows
		{rawEntry{"100664", " grp.json", good}, `entry ".claude/ grp.json": mode 100664`},
	}
	settings := blobIn(t, w.remote, `{"n": 3}`+"\n")
	for i, tc := range cases {
		if i == len(cases)/2 { // from here on, the merge case: both sides moved
			a.write(".claude/settings.json", `{"local": true}`+"\n")
			a.record()
		}
		local := git(t, a.dir, "rev-parse", "refs/strata/state")
		claude := writeRawTree(t, w.remote, tc.entry, rawEntry{"100644", "settings.json", settings})
		root := writeRawTree(t, w.remote, rawEntry{"40000", ".claude", claude})
		commit := git(t, w.remote, "commit-tree", root, "-p", pushed, "-m", "hostile")
		git(t, w.remote, "update-ref", "refs/strata/state", commit)
		tracking := git(t, a.dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/strata-remotes/")
		disk := a.read(".claude/settings.json")

		_, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
		var ue *gitstore.UnsafeTreeError
		if !errors.As(err, &ue) {
			t.Fatalf("%q: sync = %v, want an UnsafeTreeError", tc.entry.name, err)
		}
		if !strings.Contains(err.Error(), tc.want) || state.TermSafe(err.Error()) != err.Error() {
			t.Errorf("%q: error %q, want one line of printable text with %q", tc.entry.name, err, tc.want)
		}
		if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != local {
			t.Errorf("%q: the local state ref moved to %s from %s: %s", tc.entry.name, got, local, git(t, a.dir, "log", "--format=%H %s", "-3", "refs/strata/state"))
		}
		if got := git(t, a.dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/strata-remotes/"); got != tracking {
			t.Errorf("%q: tracking ref %q, want %q", tc.entry.name, got, tracking)
		}
		if got := a.read(".claude/settings.json"); got != disk {
			t.Errorf("%q: settings.json became %q", tc.entry.name, got)
		}
		git(t, a.dir, "fsck", "--strict", "--no-dangling", "--connectivity-only", "refs/strata/state")
		git(t, w.remote, "update-ref", "refs/strata/state", pushed)
	}
}

// A remote path too long for the file system is reported as what it is,
// not as a file edited on disk during the sync (issue 16.7).
func TestSyncNameTooLong(t *testing.T) {
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(".claude/settings.json", `{"model": "a"}`+"\n")
	a.record()
	a.sync()
	pushed := git(t, a.dir, "rev-parse", "refs/strata/state")
	long := strings.Repeat("x", 300) + ".json"
	blob := blobIn(t, w.remote, `{"model": "b"}`+"\n")
	claude := writeRawTree(t, w.remote, rawEntry{"100644", "settings.json", blob}, rawEntry{"100644", long, blob})
	root := writeRawTree(t, w.remote, rawEntry{"40000", ".claude", claude})
	commit := commitTruthful(t, w.remote, root, pushed, "long")
	git(t, w.remote, "update-ref", "refs/strata/state", commit)

	rep, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 0 {
		t.Errorf("skipped %v as edited on disk", rep.Skipped)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Error(), "file name too long") {
		t.Errorf("problems %v, want one saying the name is too long", rep.Problems)
	}
	if got := a.read(".claude/settings.json"); got != `{"model": "b"}`+"\n" {
		t.Errorf("settings.json = %q", got)
	}
}

// writeLooseTree writes a tree object of one entry straight into the bare
// repository at dir, as a remote could hold it, without a git process per
// object (a deep chain needs thousands).
func writeLooseTree(tb testing.TB, dir, mode, name, id string) string {
	tb.Helper()
	raw, err := hex.DecodeString(id)
	if err != nil {
		tb.Fatal(err)
	}
	body := append([]byte(mode+" "+name+"\x00"), raw...)
	obj := append([]byte(fmt.Sprintf("tree %d\x00", len(body))), body...)
	sum := sha1.Sum(obj)
	h := hex.EncodeToString(sum[:])
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(obj)
	zw.Close()
	p := filepath.Join(dir, "objects", h[:2], h[2:])
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil && !errors.Is(err, fs.ErrPermission) {
		tb.Fatal(err)
	}
	return h
}

// A remote head whose trees nest deeper, or whose paths run longer, than a
// kept path may (state.MaxPathDepth, state.MaxPathLen) is refused like any
// other unsafe tree, and the check reads no deeper than the bound: a chain
// of 2 000 trees is refused at its 64th. A subtree already found safe where
// it sat shallow is refused when it comes back nested past the bound.
func TestSyncRefusesDeepRemoteTree(t *testing.T) {
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(".claude/settings.json", `{"n": 1}`+"\n")
	a.record()
	a.sync()
	pushed := git(t, a.dir, "rev-parse", "refs/strata/state")
	clean := git(t, w.remote, "rev-parse", pushed+"^{tree}")
	chain := func(levels int, name string) string { // levels trees, a file at the bottom
		h := writeLooseTree(t, w.remote, "100644", "f", blobIn(t, w.remote, "x"))
		for i := 1; i < levels; i++ {
			h = writeLooseTree(t, w.remote, "40000", name, h)
		}
		return h
	}
	// head puts tree sub at "deep" beside the clean tree's entries.
	head := func(sub string) string {
		entries := []rawEntry{{"40000", ".claude", git(t, w.remote, "rev-parse", clean+":.claude")}, {"40000", "deep", sub}}
		commit := commitTruthful(t, w.remote, writeRawTree(t, w.remote, entries...), pushed, "deep")
		git(t, w.remote, "update-ref", "refs/strata/state", commit)
		return commit
	}
	refused := func(what, want string) {
		t.Helper()
		tracking := git(t, a.dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/strata-remotes/")
		local := git(t, a.dir, "rev-parse", "refs/strata/state")
		_, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
		var ue *gitstore.UnsafeTreeError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: sync = %v, want one line of an UnsafeTreeError with %q", what, err, want)
		}
		if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != local {
			t.Errorf("%s: the local state ref moved", what)
		}
		if got := git(t, a.dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/strata-remotes/"); got != tracking {
			t.Errorf("%s: tracking ref %q, want %q", what, got, tracking)
		}
	}

	// "deep/" + 62 more trees + "f": 64 elements, the most a path may have.
	ok := chain(63, "d")
	head(ok)
	a.sync()
	if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != git(t, w.remote, "rev-parse", "refs/strata/state") {
		t.Fatal("a head at the bound was not taken")
	}
	pushed = git(t, a.dir, "rev-parse", "refs/strata/state")
	clean = git(t, w.remote, "rev-parse", pushed+"^{tree}")

	head(chain(64, "d"))
	refused("one tree past the bound", "trees nested more than 63 deep")
	head(writeLooseTree(t, w.remote, "40000", "x", ok)) // the tree taken above, one level lower
	refused("a known tree, one level lower", "trees nested more than 63 deep")
	head(chain(2000, "d"))
	refused("2 000 trees", "trees nested more than 63 deep")
	head(chain(17, strings.Repeat("n", 255)))
	refused("a path of 16 names of 255 bytes", "bytes, over 4096")
}

// A commit past the bounds buried under a clean head is refused when it is
// fetched (every new commit is checked, attack24 G1). One an older strata
// took into the local history before that check, which the remote then
// makes the merge base, stops the sync as a refused head does: the
// remote, the commit and its role, one line, nothing merged (attack24: it
// said "merge: PhaseOutputs/a/a/…: trees nested more than 63 deep").
func TestSyncNamesDeepMergeBase(t *testing.T) {
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(".claude/notes.json", `{"n": 1}`+"\n")
	a.record()
	a.sync()
	pushed := git(t, a.dir, "rev-parse", "refs/strata/state")
	claude := git(t, w.remote, "rev-parse", pushed+":.claude")
	h := writeLooseTree(t, w.remote, "100644", "f", blobIn(t, w.remote, "x"))
	for range state.MaxPathDepth {
		h = writeLooseTree(t, w.remote, "40000", "d", h)
	}
	deep := commitTruthful(t, w.remote, writeRawTree(t, w.remote, rawEntry{"40000", ".claude", claude}, rawEntry{"40000", "deep", h}), pushed, "deep")
	clean := commitTruthful(t, w.remote, writeRawTree(t, w.remote, rawEntry{"40000", ".claude", claude}), deep, "clean")
	git(t, w.remote, "update-ref", "refs/strata/state", clean)
	// fetched now, the buried commit is refused
	_, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	if err == nil || !strings.Contains(err.Error(), "commit "+deep[:10]+": entry deep/") || !strings.Contains(err.Error(), "trees nested more than 63 deep") {
		t.Fatalf("sync of a deep commit under a clean head = %v; want it refused, naming it", err)
	}
	if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != pushed {
		t.Fatal("the local state ref moved")
	}
	// taken before the check (an older strata): the clean head on the local ref
	git(t, a.dir, "fetch", "-q", w.remote, "refs/strata/state:refs/strata-remotes/origin/state")
	git(t, a.dir, "update-ref", "refs/strata/state", clean)
	// as that strata's own move: worktree-head names it (a move by hand is
	// put back, engine/pushed.go)
	if err := os.WriteFile(filepath.Join(a.dir, ".git", "strata", "worktree-head"), []byte(clean+" "+clean+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// a records on top; the remote moves to another child of the deep commit
	a.write(".claude/notes.json", `{"n": 2}`+"\n")
	a.record()
	local := git(t, a.dir, "rev-parse", "refs/strata/state")
	other := commitTruthful(t, w.remote, writeRawTree(t, w.remote, rawEntry{"40000", ".claude", claude}), deep, "other")
	git(t, w.remote, "update-ref", "refs/strata/state", other)
	_, err = Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	want := "sync origin: refused the merge base " + deep[:10] + ": entry deep/" + strings.Repeat("d/", state.MaxPathDepth-2) + "d: trees nested more than 63 deep (nothing merged)"
	if err == nil || err.Error() != want {
		t.Fatalf("sync = %v,\nwant %s", err, want)
	}
	if got := git(t, a.dir, "rev-parse", "refs/strata/state"); got != local {
		t.Error("the local state ref moved")
	}
}
