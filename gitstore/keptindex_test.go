package gitstore

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestKeptIndexFile: the index of the kept sets is written once and read
// by the next command, which then reads none of the sets' trees; one of
// another commit of the ref, or with a byte changed, is built again.
func TestKeptIndexFile(t *testing.T) {
	dir, first := ignoredBeforeRepo(t)
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	runGit(t, dir, "rm", "-q", "sub/.gitignore")
	runGit(t, dir, "commit", "-q", "-am", "un-ignore")
	ask := func(want string) int {
		t.Helper()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ig := s.Ignores()
		ig.NoteHead()
		reads := s.treeReads
		for _, p := range []string{"secret/a.json", "sub/id.key"} {
			if got := ig.IgnoredBefore(p); got != want {
				t.Errorf("IgnoredBefore(%s) = %q, want %q", p, got, want)
			}
		}
		return s.treeReads - reads
	}
	ask(first[:10])
	file := filepath.Join(dir, ".git", "strata", "gitrules-index")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no index written: %v", err)
	}
	kept := plumbing.NewHash(strings.TrimSpace(runGit(t, dir, "rev-parse", "refs/strata/gitrules")))
	if _, at, ok := parseKeptIndex(data); !ok || at != kept {
		t.Fatal("the index written does not read back")
	}
	for name, damaged := range map[string][]byte{
		"a byte changed": bytes.Replace(data, []byte(".gitignore"), []byte(".gitignorf"), 1),
		"cut short":      data[:len(data)-1],
		"garbage":        []byte("x"),
	} {
		if _, _, ok := parseKeptIndex(damaged); ok {
			t.Errorf("%s: read as an index", name)
		}
		os.WriteFile(file, damaged, 0o644)
		ask(first[:10])
		if again, _ := os.ReadFile(file); !bytes.Equal(again, data) {
			t.Errorf("%s: not built again", name)
		}
	}
	if n := ask(first[:10]); n > 4 {
		t.Errorf("with the index written, a command read %d trees (HEAD's few only)", n)
	}

	// the ref rewritten by hand: the same set's name with other rule files
	// (attack21-inc I-1): the index is built again, not extended
	blob, err := gitOut(dir, []byte("secret/\n*.log\nother.json\n"), "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	blob = strings.TrimSpace(blob)
	set := mktree(t, dir, "100644 blob "+blob+"\t.gitignore\n")
	root := mktree(t, dir, "040000 tree "+set+"\t"+first+"\n")
	c := strings.TrimSpace(runGit(t, dir, "commit-tree", root, "-m", "by hand"))
	runGit(t, dir, "update-ref", "refs/strata/gitrules", c)
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Ignores().IgnoredBefore("other.json"); got != first[:10] {
		t.Errorf("after the set was rewritten: IgnoredBefore(other.json) = %q, want %q", got, first[:10])
	}

}

func FuzzKeptIndex(f *testing.F) {
	commit := plumbing.NewHash(strings.Repeat("1", 40))
	f.Add(encodeKeptIndex(&keptIndex{names: []string{"a", "b"}, trees: make([]plumbing.Hash, 2), changes: map[string][]keptChange{
		".gitignore":     {{0, plumbing.NewHash(strings.Repeat("2", 40))}, {1, plumbing.ZeroHash}},
		"sub/.gitignore": {{1, plumbing.NewHash(strings.Repeat("3", 40))}},
	}}, commit))
	f.Add([]byte(keptIndexHeader))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, at, ok := parseKeptIndex(data)
		if !ok || x == nil {
			return
		}
		again, at2, ok := parseKeptIndex(encodeKeptIndex(x, at))
		if !ok || at2 != at || !reflect.DeepEqual(x.names, again.names) || !reflect.DeepEqual(x.trees, again.trees) || len(x.changes) != len(again.changes) {
			t.Fatalf("an index read back differs")
		}
		for p, cs := range x.changes {
			if !reflect.DeepEqual(cs, again.changes[p]) {
				t.Fatalf("%q: changes read back differ", p)
			}
		}
	})
}
