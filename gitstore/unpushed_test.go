package gitstore

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// PathsSince (git rev-list HEAD ^BASE) and PathsSinceQuick (the merge-base
// walk) name every path of the commits a push of HEAD to a remote at BASE
// publishes, on seeded random histories with merges and one or two roots:
// exactly those where commit dates follow the history; where they go
// against it (clocks skewed between machines) both may name more, as both
// walks go by date, never fewer. A path missed here would be a private
// file that sync's check lets leave. The truth is computed from the
// parents the test gave each commit.
func TestPathsSinceHoldsEveryPublishedPath(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, false)
	tree := runGitIn(t, dir, nil, "mktree")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	wider := map[string]int{}
	for seed := uint64(1); seed <= 16; seed++ {
		skewed := seed%2 == 0
		rng := rand.New(rand.NewPCG(seed, 7))
		var commits []string
		parents := map[int][]int{}
		for i := 0; i < 40; i++ {
			args := []string{"commit-tree", tree}
			if i >= 2 || i == 1 && rng.IntN(2) == 1 { // one or two roots
				parents[i] = pickParents(rng, len(commits))
				for _, p := range parents[i] {
					args = append(args, "-p", commits[p])
				}
			}
			when := 1_700_000_000 + i*60
			if skewed {
				when += rng.IntN(4000) - 2000
			}
			date := fmt.Sprintf("%d +0000", when)
			msg := fmt.Sprintf("change %d-%d\n\nStrata-Path: p%d.json\nStrata-Action: add\n", seed, i, i)
			env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
			commits = append(commits, runGitIn(t, dir, env, append(args, "-m", msg)...))
		}
		for k := 0; k < 10; k++ {
			h, b := rng.IntN(len(commits)), -1
			head, base := commits[h], ""
			if k > 0 {
				b = rng.IntN(len(commits))
				base = commits[b]
			}
			var want []string
			inBase := ancestors(parents, b)
			for c := range ancestors(parents, h) {
				if !inBase[c] {
					want = append(want, fmt.Sprintf("p%d.json", c))
				}
			}
			slices.Sort(want)
			exact, err := s.PathsSince(context.Background(), head, base)
			if err != nil {
				t.Fatal(err)
			}
			quick, err := s.PathsSinceQuick(head, base)
			if err != nil {
				t.Fatal(err)
			}
			for name, got := range map[string]map[string]bool{"PathsSince": exact, "PathsSinceQuick": quick} {
				sorted := slices.Sorted(maps.Keys(got))
				for _, p := range want {
					if !got[p] {
						t.Fatalf("seed %d: %s(p%d, p%d) misses %s: %v\nwant at least %v", seed, name, h, b, p, sorted, want)
					}
				}
				if !skewed && len(got) != len(want) {
					t.Fatalf("seed %d, dates in order: %s(p%d, p%d) = %v\nwant %v", seed, name, h, b, sorted, want)
				}
				if len(got) > len(want) {
					wider[name]++
				}
			}
		}
	}
	t.Logf("of 80 skewed cases, named more than pushed: %v", wider)
}

// ancestors returns commit c and every commit it reaches through parents
// (none for c < 0).
func ancestors(parents map[int][]int, c int) map[int]bool {
	seen := map[int]bool{}
	var visit func(int)
	visit = func(c int) {
		if c < 0 || seen[c] {
			return
		}
		seen[c] = true
		for _, p := range parents[c] {
			visit(p)
		}
	}
	visit(c)
	return seen
}

// pickParents picks one or two distinct earlier commits, mostly recent ones.
func pickParents(rng *rand.Rand, n int) []int {
	a := n - 1 - rng.IntN(min(n, 4))
	if n < 2 || rng.IntN(4) != 0 {
		return []int{a}
	}
	b := rng.IntN(n)
	if b == a {
		return []int{a}
	}
	return []int{a, b}
}

// runGitIn runs git in dir with extra environment and an empty stdin.
func runGitIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(os.TempDir()), env...)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}
