package conflict

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/markdown"
)

// TestMergeMemoryRandomAdds: two sides add items (and sections) at random
// to one base; the merge holds the later version's lines in order, every
// line either side added, and each added item in the section it was added to.
func TestMergeMemoryRandomAdds(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	sections := []string{"Learnings", "Decisions", "Notes"}
	for round := 0; round < 300; round++ {
		base := []byte("# Memory\n\nIntro text.\n\n## Learnings\n- l0\n\n## Decisions\n- d0\n\n## Notes\nfree text\n")
		var added []struct{ sec, text string }
		side := func(name string) []byte {
			src := base
			for i := 0; i < 1+rng.Intn(4); i++ {
				sec := sections[rng.Intn(len(sections))]
				if rng.Intn(5) == 0 {
					sec = "New " + name
				}
				text := fmt.Sprintf("%s %d-%d", name, round, i)
				out, changed, err := markdown.AddItem(src, sec, 0, text)
				if err != nil || !changed {
					t.Fatalf("add: %v", err)
				}
				src = out
				added = append(added, struct{ sec, text string }{sec, text})
			}
			return src
		}
		e, l := side("e"), side("l")
		got, err := MergeMemory(base, e, l)
		if err != nil {
			t.Fatal(err)
		}
		// the later version's lines, in order
		gl := strings.Split(string(got), "\n")
		j := 0
		for _, line := range strings.Split(string(l), "\n") {
			for j < len(gl) && gl[j] != line {
				j++
			}
			if j == len(gl) {
				t.Fatalf("round %d: later line %q missing or out of order:\n%s", round, line, got)
			}
			j++
		}
		d, err := markdown.Parse(got)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range added {
			s := d.Find(a.sec, 0)
			found := false
			for _, it := range s.Items {
				found = found || it.Text == a.text
			}
			if s == nil || !found || strings.Count(string(got), "- "+a.text+"\n") != 1 {
				t.Fatalf("round %d: %q not once under %q:\n%s", round, a.text, a.sec, got)
			}
		}
	}
}

// FuzzMergeMemory: whatever the three versions, the merge keeps the later
// version's lines in order and every line the earlier one added.
func FuzzMergeMemory(f *testing.F) {
	f.Add("# M\n## L\n- a\n", "# M\n## L\n- a\n- b\n", "# M\n## L\n- a\n- c\n## N\ntext")
	f.Add("", "```\n- x\n", "---\nk: v\n---\r\n# T\r\n")
	f.Fuzz(func(t *testing.T, base, earlier, later string) {
		got, err := MergeMemory([]byte(base), []byte(earlier), []byte(later))
		if err != nil {
			return
		}
		gl := textdiffLines(string(got))
		j := 0
		for _, line := range textdiffLines(later) {
			for j < len(gl) && gl[j] != line {
				j++
			}
			if j == len(gl) {
				t.Fatalf("later line %q lost or moved:\n%q", line, got)
			}
			j++
		}
		// a line's carriage returns before its "\n" belong to its ending, as
		// MergeMemory compares lines ("0\r\r\n" holds nothing "0\n" does not;
		// a lone "\r" ends a line in CommonMark)
		have := map[string]bool{}
		for _, l := range gl {
			have[strings.TrimRight(l, "\r")] = true
		}
		for _, l := range textdiffLines(earlier) {
			l = strings.TrimRight(l, "\r")
			if strings.TrimSpace(l) != "" && !have[l] && !strings.Contains(base, l) {
				t.Fatalf("earlier's line %q lost:\n%q", l, got)
			}
		}
	})
}

// textdiffLines are the lines of s without their line endings.
func textdiffLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		out = append(out, strings.TrimSuffix(l, "\r"))
	}
	return out
}

// FuzzMergeGraph: the merge never fails; with nothing done on the earlier
// side it is the later version byte for byte; an entity or observation the
// earlier side added is in the result unless the later side deleted it.
func FuzzMergeGraph(f *testing.F) {
	f.Add(`{"type":"entity","name":"A","entityType":"t","observations":["1"]}`+"\n",
		`{"type":"entity","name":"A","entityType":"t","observations":["1","2"]}`+"\n"+`{"type":"entity","name":"B","entityType":"t","observations":[]}`,
		`not json`+"\n"+`{"type":"entity","name":"A","entityType":"t","observations":["1","3"]}`+"\n")
	f.Fuzz(func(t *testing.T, base, earlier, later string) {
		if got := MergeGraph([]byte(base), []byte(base), []byte(later)); string(got) != later {
			t.Fatalf("nothing done earlier, yet %q became %q", later, got)
		}
		got := graph.Parse(MergeGraph([]byte(base), []byte(earlier), []byte(later)))
		b, e, l := graph.Parse([]byte(base)), graph.Parse([]byte(earlier)), graph.Parse([]byte(later))
		bE, lE := entities(b), entities(l)
		seen := map[string]bool{}
		for _, en := range e.Entities {
			if seen[en.Name] {
				continue
			}
			seen[en.Name] = true
			if _, inBase := bE[en.Name]; inBase {
				if _, inLater := lE[en.Name]; !inLater {
					continue // deleted later
				}
			}
			g, ok := got.Entity(en.Name)
			if !ok {
				t.Fatalf("entity %q lost", en.Name)
			}
			for _, o := range en.Observations {
				if !slices.Contains(bE[en.Name].Observations, o) && !slices.Contains(g.Observations, o) {
					t.Fatalf("observation %q of %q lost", o, en.Name)
				}
			}
		}
	})
}
