package gitstore

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// The check's tree diff, which parses only the entries between two
// versions' common start and end, finds exactly the changes a comparison
// of the two trees' whole file maps finds: random folders of files and
// subfolders, changed at random (files added, removed, replaced; names
// that share prefixes, a file and a folder of one name).
func TestHistoryCheckDiffMatchesFileMaps(t *testing.T) {
	r := newTestRepo(t, "plain")
	s, err := Open(r.open)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rng := rand.New(rand.NewPCG(1, 2))
	blob := func(i int) plumbing.Hash {
		h, err := s.writeObject(plumbing.BlobObject, fmt.Appendf(nil, "%d\n", i))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// write turns a map of path -> content number into trees
	var write func(files map[string]int) plumbing.Hash
	write = func(files map[string]int) plumbing.Hash {
		subs := map[string]map[string]int{}
		var es []odb.Entry
		for p, v := range files {
			dir, rest, ok := cut(p)
			if !ok {
				es = append(es, odb.Entry{Name: p, Mode: filemode.Regular, Hash: blob(v)})
				continue
			}
			if subs[dir] == nil {
				subs[dir] = map[string]int{}
			}
			subs[dir][rest] = v
		}
		for d, m := range subs {
			es = append(es, odb.Entry{Name: d, Mode: filemode.Dir, Hash: write(m)})
		}
		h, err := s.writeObject(plumbing.TreeObject, odb.EncodeTree(es))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	names := []string{"a", "a.json", "a0", "ab", "b", "f%03d.json", "x/y.json", "x/z", "a/b.json", "ab/c"}
	name := func() string {
		n := names[rng.IntN(len(names))]
		if n == "f%03d.json" {
			n = fmt.Sprintf(n, rng.IntN(300))
		}
		return ".claude/" + n
	}
	valid := func(m map[string]int) map[string]int { // no path both a file and a folder
		out := map[string]int{}
		for p, v := range m {
			clash := false
			for q := range m {
				clash = clash || len(q) > len(p) && q[:len(p)+1] == p+"/"
			}
			if !clash {
				out[p] = v
			}
		}
		return out
	}
	// a peer's names can make one version's entry the byte-for-byte end
	// of another's ("b.json" of "x100644 b.json", same blob)
	fixed := [][2]map[string]int{
		{{".claude/a.json": 1, ".claude/b.json": 2}, {".claude/a.json": 1, ".claude/x100644 b.json": 2}},
		{{".claude/a.json": 1, ".claude/x100644 b.json": 2}, {".claude/a.json": 1, ".claude/b.json": 2}},
		{{".claude/b.json": 2, ".claude/c": 3}, {".claude/a100644 b.json": 2, ".claude/c": 3}},
	}
	for round := 0; round < 300+len(fixed); round++ {
		before := map[string]int{}
		for i := 0; i < rng.IntN(400); i++ {
			before[name()] = rng.IntN(5)
		}
		before = valid(before)
		after := maps.Clone(before)
		if round < len(fixed) {
			before, after = fixed[round][0], fixed[round][1]
		}
		for i := 0; round >= len(fixed) && i < 1+rng.IntN(6); i++ {
			p := name()
			switch rng.IntN(3) {
			case 0:
				delete(after, p)
			default:
				after[p] = rng.IntN(5)
			}
		}
		after = valid(after)
		ta, tb := write(before), write(after)
		if round >= len(fixed) && rng.IntN(10) == 0 {
			ta = plumbing.ZeroHash
			before = map[string]int{}
		}
		want := map[string]state.Action{}
		for p, v := range after {
			if w, ok := before[p]; !ok {
				want[p] = state.ActionAdd
			} else if w != v {
				want[p] = state.ActionUpdate
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok {
				want[p] = state.ActionDelete
			}
		}
		hc := &historyCheck{s: s, budget: maxCheckEntries, cur: map[plumbing.Hash][]byte{}}
		got := map[string]state.Action{}
		if p, why := hc.diff(ta, tb, "", 0, got); why != "" {
			t.Fatalf("round %d: %s: %s", round, p, why)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("round %d: diff %v, want %v", round, got, want)
		}
	}
}

func cut(p string) (string, string, bool) {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}

// blockWithoutAction finds the first trailer block with no Strata-Action:
// one a second Strata-Path line cuts short (two paths in one block), or
// the last one; strata's own blocks, and lines that are not trailers, pass.
func TestBlockWithoutAction(t *testing.T) {
	for _, tc := range []struct {
		name, msg, path, next string
		ok                    bool
	}{
		{"strata's blocks", "update\n\nStrata-Path: a.json\nStrata-Action: update\nStrata-Source: record\nStrata-Path: b.json\nStrata-Action: add\nStrata-Time: x\n", "", "", false},
		{"no trailers", "housekeeping\n", "", "", false},
		{"an empty action is an action", "x\n\nStrata-Path: a.json\nStrata-Action: \n", "", "", false},
		{"two paths in one block", "x\n\nStrata-Path: a.json\nStrata-Path: b.json\nStrata-Action: update\n", "a.json", "b.json", true},
		{"the second path quoted", "x\n\nStrata-Path: a.json\nStrata-Path: \" b.json\"\nStrata-Action: update\n", "a.json", " b.json", true},
		{"the last block has none", "x\n\nStrata-Path: a.json\nStrata-Action: add\nStrata-Path: b.json\nStrata-Source: record\n", "b.json", "", true},
		{"an action line without its space", "x\n\nStrata-Path: a.json\nStrata-Action:add\n", "a.json", "", true},
		{"only the last paragraph counts", "x\n\nStrata-Path: a.json\n\nStrata-Path: b.json\nStrata-Action: add\n", "", "", false},
	} {
		p, next, ok := blockWithoutAction(tc.msg)
		if p != tc.path || next != tc.next || ok != tc.ok {
			t.Errorf("%s: blockWithoutAction = %q, %q, %v; want %q, %q, %v", tc.name, p, next, ok, tc.path, tc.next, tc.ok)
		}
	}
}

// shownPath quotes a path wherever state.TermSafe would (so a refusal names
// a remote's path as the sync report does) and wherever quotePath would
// (so white space at either end shows).
func TestShownPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{".claude/notes.json", ".claude/notes.json"},
		{".claude/café.json", ".claude/café.json"},
		{".claude/.g\u200cit", `".claude/.g\u200cit"`},
		{".claude/\u202ex.json", `".claude/\u202ex.json"`},
		{".claude/\x1b[2J", `".claude/\x1b[2J"`},
		{".claude/notes.json ", `".claude/notes.json "`},
		{"\xff.json", `"\xff.json"`},
		// white space at either end of any element (attack25 recheck)
		{".claude/ lead.json", `".claude/ lead.json"`},
		{".claude /x.json", `".claude /x.json"`},
		{".claude/lead .json", ".claude/lead .json"},
	} {
		if got := shownPath(tc.in); got != tc.want {
			t.Errorf("shownPath(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
