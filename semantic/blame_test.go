package semantic

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

// forwardLines is how MEMORY.md lines were blamed before the walk went
// back from the last version: every version read, oldest first, as git
// blame does. blameLines must give the same answers.
func forwardLines(versions []Version) []BlameLine {
	type line struct {
		text string
		o    Origin
	}
	var cur []line
	seen := map[string]Origin{}
	for _, v := range versions {
		var texts []string
		if v.Content != nil {
			texts = strings.Split(strings.TrimSuffix(string(v.Content), "\n"), "\n")
		}
		old := make([]string, len(cur))
		for i, l := range cur {
			old[i] = l.text
		}
		match := lcs(old, texts)
		next := make([]line, len(texts))
		for j, t := range texts {
			if i, ok := match[j]; ok {
				next[j] = cur[i]
				continue
			}
			o := originOf(v.Entry)
			if first, ok := seen[t]; ok && v.Entry.Source == state.SourceRestore {
				o = first
				o.Restored, o.RestoredBy = true, v.Entry.Commit
			}
			if _, ok := seen[t]; !ok {
				seen[t] = originOf(v.Entry)
			}
			next[j] = line{t, o}
		}
		cur = next
	}
	out := make([]BlameLine, len(cur))
	for i, l := range cur {
		out[i] = BlameLine{Line: i + 1, Value: l.text, Origin: l.o}
	}
	return out
}

// counted is a History that counts the versions whose bytes were read.
type counted struct {
	Versions
	read map[int]bool
}

func (c *counted) Content(i int) ([]byte, error) {
	c.read[i] = true
	return c.Versions.Content(i)
}

// The walk back from the last version gives every MEMORY.md line the
// origin the forward walk gives it, on random histories of a few short
// lines: lines moved, repeated, removed and brought back, empty versions,
// deletions, and restores (also of text no version held before, and of
// the same text twice in one version).
func TestBlameLinesMatchesForward(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	texts := []string{"# Memory", "", "- a", "- b", "- c", "## S", "- a"}
	for trial := 0; trial < 5000; trial++ {
		var vs []Version
		for i := 0; i < 1+r.IntN(30); i++ {
			src := state.SourceRecord
			if r.IntN(3) == 0 {
				src = state.SourceRestore
			}
			var content []byte
			switch n := r.IntN(12); {
			case n == 0 && i > 0:
				content = nil // a deletion
			case n == 1:
				content = []byte{} // an empty file
			case n < 5 && i > 0 && vs[i-1].Content != nil:
				content = edit(r, vs[i-1].Content, texts) // a small edit of the version before
			case n < 7 && i > 1:
				content = vs[r.IntN(i)].Content // an earlier version again
			default:
				var b strings.Builder
				for j := r.IntN(8); j > 0; j-- {
					b.WriteString(texts[r.IntN(len(texts))] + "\n")
				}
				if r.IntN(5) == 0 {
					b.WriteString("no final newline")
				}
				content = []byte(b.String())
			}
			vs = append(vs, ver(fmt.Sprintf("c%02d", i), src, ""))
			vs[i].Content = content
		}
		if vs[len(vs)-1].Content == nil {
			continue
		}
		got, err := Blame("MEMORY.md", KindMemory, Versions(vs), "")
		require.NoError(t, err)
		require.Equal(t, forwardLines(vs), got, "trial %d: %q", trial, vs)
	}
}

// edit changes, adds or removes one line of content.
func edit(r *rand.Rand, content []byte, texts []string) []byte {
	lines := strings.SplitAfter(string(content), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	j := r.IntN(len(lines) + 1)
	t := texts[r.IntN(len(texts))] + "\n"
	switch {
	case j == len(lines):
		lines = append(lines, t)
	case r.IntN(2) == 0:
		lines = append(lines[:j], lines[j+1:]...)
	default:
		lines[j] = t
	}
	return []byte(strings.Join(lines, ""))
}

// alternating is n versions going back and forth between two 400-line
// MEMORY.md versions that share their first lines (shared), as a hostile
// history pushed to a remote can (attack22 O-3).
func alternating(n, shared int, src state.Source) Versions {
	var a, b strings.Builder
	for j := 0; j < 400; j++ {
		if j < shared {
			fmt.Fprintf(&a, "- shared %d\n", j)
			fmt.Fprintf(&b, "- shared %d\n", j)
			continue
		}
		fmt.Fprintf(&a, "- a line %d\n", j)
		fmt.Fprintf(&b, "- b line %d\n", j)
	}
	vs := make(Versions, n)
	for i := range vs {
		vs[i] = Version{Entry: state.Entry{Commit: fmt.Sprintf("c%05d", i), Source: src}, Content: []byte(a.String())}
		if i%2 == 1 {
			vs[i].Content = []byte(b.String())
		}
	}
	return vs
}

// A blame of a MEMORY.md that went back and forth between two versions
// 2 000 times reads the last two versions only: every line of the last
// one was added by it. (Walking forward read all 2 000.)
func TestBlameLinesReadsBackOnlyAsFarAsItNeeds(t *testing.T) {
	vs := alternating(2000, 0, state.SourceRecord)
	h := &counted{Versions: vs, read: map[int]bool{}}
	got, err := Blame("MEMORY.md", KindMemory, h, "")
	require.NoError(t, err)
	require.Len(t, got, 400)
	for _, l := range got {
		require.Equal(t, "c01999", l.Commit)
	}
	require.Equal(t, map[int]bool{0: true, 1: true}, h.read)

	// Lines both versions hold, and restores, send the walk to the first
	// version; the answers stay the forward walk's.
	for _, src := range []state.Source{state.SourceRecord, state.SourceRestore} {
		vs := alternating(100, 4, src)
		h := &counted{Versions: vs, read: map[int]bool{}}
		got, err := Blame("MEMORY.md", KindMemory, h, "")
		require.NoError(t, err)
		require.Equal(t, forwardLines(vs), got, "source %s", src)
		require.Equal(t, "c00000", got[0].Commit)
		require.Len(t, h.read, 100)
	}
}
