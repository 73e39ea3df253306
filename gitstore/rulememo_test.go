package gitstore

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// TestRuleMemoDamaged: a gitrules-memo that is garbage, cut short or of
// another format is dropped (the answers are found again), never taken.
func TestRuleMemoDamaged(t *testing.T) {
	dir, first := ignoredBeforeRepo(t)
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	runGit(t, dir, "commit", "-q", "-am", "un-ignore")
	whole := encodeRuleMemo(map[memoKey]memoVal{
		{plumbing.NewHash(strings.Repeat("1", 40)), ".gitignore"}: {treeEntry{Name: ".gitignore", Mode: filemode.Regular, Hash: plumbing.NewHash(strings.Repeat("2", 40))}, true},
	})
	for name, data := range map[string][]byte{
		"garbage":        []byte("\x00\x01garbage"),
		"cut short":      whole[:len(whole)-3],
		"another format": append([]byte("strata gitrules-memo 9\n"), whole[len(memoHeader):]...),
		"name with /":    bytes.Replace(whole, []byte(".gitignore"), []byte("a/gitignor"), 1),
		// a byte of a record changed, the record still well formed
		// (attack21-p1 P1-2): the checksum catches it
		"a flipped byte": bytes.Replace(whole, []byte(".gitignore"), []byte(".gitignorf"), 1),
	} {
		writeFile(t, filepath.Join(dir, ".git", "strata", "gitrules-memo"), string(data))
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Ignores().IgnoredBefore("secret/a.json"); got != first[:10] {
			t.Errorf("%s: IgnoredBefore = %q, want %q", name, got, first[:10])
		}
		s.mu.Lock()
		if len(s.memo.m) == 0 {
			t.Errorf("%s: the memo holds no answers", name)
		}
		for k := range s.memo.m {
			if k.tree == plumbing.NewHash(strings.Repeat("1", 40)) {
				t.Errorf("%s: the file's answer for %s is taken", name, k.name)
			}
		}
		s.mu.Unlock()
		s.Close()
	}
	if _, ok := parseRuleMemo(whole); !ok {
		t.Fatal("a whole memo does not parse")
	}
	os.Remove(filepath.Join(dir, ".git", "strata", "gitrules-memo"))
}

func FuzzRuleMemo(f *testing.F) {
	f.Add([]byte(memoHeader))
	f.Add(encodeRuleMemo(map[memoKey]memoVal{
		{plumbing.NewHash(strings.Repeat("1", 40)), ".gitignore"}: {treeEntry{Name: ".gitignore", Mode: filemode.Regular, Hash: plumbing.NewHash(strings.Repeat("2", 40))}, true},
		{plumbing.NewHash(strings.Repeat("3", 40)), "sub"}:        {},
	}))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ok := parseRuleMemo(data)
		if !ok {
			return
		}
		again, ok := parseRuleMemo(encodeRuleMemo(m))
		if !ok || !reflect.DeepEqual(m, again) {
			t.Fatalf("a memo read back differs: %v, %v", ok, again)
		}
	})
}
