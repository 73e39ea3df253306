package gitstore

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// BenchmarkCheckFetched is the cost of checking a fetched head's tree of
// 2 000 files from cold (the first sync of a clone); later syncs check only
// the subtrees that changed.
func BenchmarkCheckFetched(b *testing.B) {
	r := newTestRepo(b, "plain")
	s, err := Open(r.open)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var chs []state.Change
	for i := 0; i < 2000; i++ {
		chs = append(chs, state.Change{Path: fmt.Sprintf(".claude/s%02d/f%04d.json", i%20, i), Content: []byte(fmt.Sprintf("{\"i\": %d}\n", i)),
			Class: state.ClassClaudeJSON, Schema: "json", Source: state.SourceRecord, Time: time.Unix(1e9, 0)})
	}
	if _, err := s.Record(chs...); err != nil {
		b.Fatal(err)
	}
	head, err := s.Head(s.StateRef())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		verifiedTrees.Lock()
		verifiedTrees.m = map[plumbing.Hash]treeSize{}
		verifiedTrees.Unlock()
		if err := s.checkFetched("origin", plumbing.NewHash(head)); err != nil {
			b.Fatal(err)
		}
	}
}

// A tree nested past the bound that reached a ref anyway (an older strata
// took it from a remote) makes Files fail at the bound, quickly, instead of
// walking it to the bottom with a path per level.
func TestFilesStopsAtDepthBound(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, _ := gitOut(r.main, []byte("x"), "hash-object", "-w", "--stdin")
	mk := func(mode, name, id string) string {
		raw, _ := hex.DecodeString(id)
		out, err := gitOut(r.main, append([]byte(mode+" "+name+"\x00"), raw...), "hash-object", "-t", "tree", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	h = mk("100644", "f", h)
	for range state.MaxPathDepth {
		h = mk("40000", "d", h)
	}
	c := runGit(t, r.main, "commit-tree", h, "-m", "deep")
	_, err = s.Files(c)
	if err == nil || !strings.Contains(err.Error(), "trees nested more than 63 deep") {
		t.Fatalf("Files = %v, want the depth refused", err)
	}
}

// A fetched head holding more files in all than maxRemoteFiles is refused
// before it is merged, with one line: files are counted through every
// subtree, a subtree named twice counted twice (a push of a few hundred
// kilobytes can name a million paths so), and a subtree found safe before
// still counts. A tree object over maxTreeObject bytes is refused from its
// header.
func TestCheckFetchedCountsFiles(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	git := func(stdin string, args ...string) string {
		t.Helper()
		out, err := gitOut(r.main, []byte(stdin), args...)
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(out)
	}
	blob := git("TestCheckFetchedCountsFiles\n", "hash-object", "-w", "--stdin")
	three := git(fmt.Sprintf("100644 blob %s\ta.json\n100644 blob %s\tb.json\n100644 blob %s\tc.json\n", blob, blob, blob), "mktree")
	root := git(fmt.Sprintf("040000 tree %s\td1\n040000 tree %s\td2\n100644 blob %s\tf.json\n", three, three, blob), "mktree")
	head := plumbing.NewHash(git("x\n", "commit-tree", root))

	defer func(n int, size int64) { maxRemoteFiles, maxTreeObject = n, size }(maxRemoteFiles, maxTreeObject)
	check := func(files int, want string) {
		t.Helper()
		maxRemoteFiles = files
		err := s.checkFetched("origin", head)
		switch {
		case want == "" && err != nil:
			t.Fatalf("limit %d: %v", files, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n")):
			t.Fatalf("limit %d: %v, want one line with %q", files, err, want)
		}
	}
	check(8, "more than 8 files and folders in all, over strata's limit") // 7 files, 2 folders
	check(9, "")
	check(8, "entry /: more than 8 files and folders in all") // every tree of it known safe now
	forget := func() {
		verifiedTrees.Lock()
		verifiedTrees.m = map[plumbing.Hash]treeSize{}
		verifiedTrees.Unlock()
	}
	forget()
	check(4, "entry d1: more than 4 files and folders in all") // refused in d1, d2 never read

	// nested shared empty trees name no file but cost every walk of the
	// tree (attack19 verify-remote N1): their folders count
	forget()
	nested := git("", "mktree")
	for level := 0; level < 4; level++ {
		var b strings.Builder
		for i := 0; i < 10; i++ {
			fmt.Fprintf(&b, "040000 tree %s\td%d\n", nested, i)
		}
		nested = git(b.String(), "mktree")
	}
	empty := plumbing.NewHash(git("x\n", "commit-tree", nested))
	maxRemoteFiles = 1000
	if err := s.checkFetched("origin", empty); err == nil || !strings.Contains(err.Error(), "more than 1000 files and folders in all") {
		t.Fatalf("11 110 nested empty folders: %v", err)
	}

	maxRemoteFiles, maxTreeObject = 9, 40
	forget()
	if err := s.checkFetched("origin", head); err == nil || !strings.Contains(err.Error(), "entry /: a tree object of 92 bytes, over 40") {
		t.Fatalf("a tree over maxTreeObject: %v", err)
	}
}
