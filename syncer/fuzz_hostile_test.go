package syncer

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// hostileAlphabet is what fuzzed tree entry names are made of: the pieces
// of every name git refuses on some file system.
var hostileAlphabet = []string{".", "g", "i", "t", "G", "I", "T", "~", "1", "/", `\`, " ", ":", "\u200c", "\ufeff", "a", ".json", "..", ".git"}

func hostileName(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteString(hostileAlphabet[int(c)%len(hostileAlphabet)])
	}
	return s.String()
}

// listOutside lists every file under base except inside the given work tree
// and remote, which sync may change.
func listOutside(tb testing.TB, base string, skip ...string) []string {
	var out []string
	filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		for _, s := range skip {
			if p == s {
				return filepath.SkipDir
			}
		}
		out = append(out, p)
		return nil
	})
	sort.Strings(out)
	return out
}

// FuzzSyncHostileTree merges remote trees whose entry names come from a
// hostile alphabet (at the root and in .claude/, as files and trees):
// whatever the names, nothing is written outside the work tree, the state
// ref's trees pass `git fsck --strict`, and .git is never written through a
// kept path.
func FuzzSyncHostileTree(f *testing.F) {
	f.Add([]byte{17, 0}, []byte{18}, true)
	f.Add([]byte{0, 5, 6, 7, 12}, []byte{2, 3, 4, 16}, false)
	f.Add([]byte{7, 1, 2, 16}, []byte{0, 0}, true)
	f.Fuzz(func(t *testing.T, n1, n2 []byte, asTree bool) {
		if len(n1) > 12 || len(n2) > 12 || len(n1) == 0 || len(n2) == 0 {
			// an empty entry name: git's own diff-tree, which builds the
			// remote's commit here (commitTruthful), refuses to read it
			t.Skip()
		}
		w := newWorld(t, "a")
		a := w.ms[0]
		a.write(".claude/settings.json", `{"n": 1}`+"\n")
		a.record()
		a.sync()
		pushed := git(t, a.dir, "rev-parse", "refs/strata/state")
		a.write(".claude/settings.json", `{"n": 2}`+"\n")
		a.record()
		blob := blobIn(t, w.remote, `{"x": 1}`+"\n")
		inner := writeRawTree(t, w.remote, rawEntry{"100644", hostileName(n2), blob})
		claude := []rawEntry{{"100644", hostileName(n1) + ".json", blob}}
		root := []rawEntry{{"40000", ".claude", ""}}
		if asTree {
			root = append(root, rawEntry{"40000", hostileName(n1), inner})
		} else {
			claude = append(claude, rawEntry{"40000", hostileName(n2), inner})
		}
		root[0].id = writeRawTree(t, w.remote, claude...)
		rootID := writeRawTree(t, w.remote, root...)
		commit := commitTruthful(t, w.remote, rootID, pushed, "fuzz")
		git(t, w.remote, "update-ref", "refs/strata/state", commit)

		base := filepath.Dir(a.dir)
		gitDir := filepath.Join(a.dir, ".git")
		before := listOutside(t, base, a.dir, w.remote)
		hooks := listOutside(t, filepath.Join(gitDir, "hooks"))
		config, _ := os.ReadFile(filepath.Join(gitDir, "config"))
		Sync(context.Background(), a.eng, Options{Cwd: a.dir}) // refused or merged: both are fine

		if after := listOutside(t, base, a.dir, w.remote); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Fatalf("files changed outside the work tree:\nbefore %q\nafter %q", before, after)
		}
		if got := listOutside(t, filepath.Join(gitDir, "hooks")); strings.Join(got, "\n") != strings.Join(hooks, "\n") {
			t.Fatalf(".git/hooks changed: %q", got)
		}
		if got, _ := os.ReadFile(filepath.Join(gitDir, "config")); string(got) != string(config) {
			t.Fatalf(".git/config changed")
		}
		// Only what the state ref reaches is copied into a fresh repository
		// and checked there (a refused fetch leaves loose objects behind
		// that nothing refers to).
		check := filepath.Join(base, "check")
		git(t, base, "init", "-q", "--bare", check)
		git(t, check, "fetch", "-q", a.dir, "refs/strata/state:refs/strata/state")
		fsck(t, check)
	})
}
