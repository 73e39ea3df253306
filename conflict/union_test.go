package conflict

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
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
		if got, lost := MergeGraph([]byte(base), []byte(base), []byte(later)); string(got) != later || len(lost) != 0 {
			t.Fatalf("nothing done earlier, yet %q became %q, lost %v", later, got, lost)
		}
		merged, _ := MergeGraph([]byte(base), []byte(earlier), []byte(later))
		got := graph.Parse(merged)
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

// The graph merge keeps every member of an entity line, not only the three
// the reference server writes: a line only the earlier side changed comes
// whole, a line both changed keeps the later bytes with the earlier side's
// member changes applied, and a new entity comes as its line. Whatever it
// cannot keep it names: an entityType both sides changed (the later one
// stays), the edits of an entity the other side deleted, and a relation to
// a deleted entity.
func TestMergeGraphKeepsEveryMember(t *testing.T) {
	base := `{"type":"entity","name":"base","entityType":"t","observations":["b"],"createdAt":"2026-01-14T22:28:02Z","version":1}
{"type":"entity","name":"both","entityType":"t","observations":["b"],"createdAt":"C","version":1}
{"type":"entity","name":"typed","entityType":"t","observations":[]}
{"type":"entity","name":"clash","entityType":"t","observations":[]}
{"type":"entity","name":"goneLater","entityType":"t","observations":["g"]}
{"type":"entity","name":"goneEarlier","entityType":"t","observations":["g"]}
`
	earlier := `{"type":"entity","name":"base","entityType":"t","observations":["b","a-obs"],"createdAt":"2026-01-14T22:28:02Z","version":2}
{"type":"entity","name":"both","entityType":"t","observations":["b","e"],"createdAt":"C","version":2,"mood":"e"}
{"type":"entity","name":"typed","entityType":"person","observations":["e"]}
{"type":"entity","name":"clash","entityType":"earlier-type","observations":[]}
{"type":"entity","name":"goneLater","entityType":"t","observations":["g","kept?"]}
{"type":"entity","name":"a-new","entityType":"t","observations":["a"],"createdAt":"2026-02-01T00:00:00Z","version":1}
{"type":"relation","from":"a-new","to":"goneLater","relationType":"r","createdAt":"X"}
{"type":"relation","from":"a-new","to":"base","relationType":"r","createdAt":"X"}
`
	later := `{"type":"entity","name":"base","entityType":"t","observations":["b"],"createdAt":"2026-01-14T22:28:02Z","version":1}
{"type":"entity","name":"both","entityType":"t","observations":["b","l"],"createdAt":"C","version":2}
{"type":"entity","name":"typed","entityType":"t","observations":["l"]}
{"type":"entity","name":"clash","entityType":"later-type","observations":[]}
{"type":"entity","name":"goneEarlier","entityType":"t","observations":["g","lost?"]}
{"type":"entity","name":"v-new","entityType":"t","observations":["v"]}
{"type":"relation","from":"v-new","to":"goneEarlier","relationType":"r"}
`
	got, lost := MergeGraph([]byte(base), []byte(earlier), []byte(later))
	want := `{"type":"entity","name":"base","entityType":"t","observations":["b","a-obs"],"createdAt":"2026-01-14T22:28:02Z","version":2}
{"type":"entity","name":"both","entityType":"t","observations":["b","l","e"],"createdAt":"C","version":2,"mood":"e"}
{"type":"entity","name":"typed","entityType":"person","observations":["l","e"]}
{"type":"entity","name":"clash","entityType":"later-type","observations":[]}
{"type":"entity","name":"v-new","entityType":"t","observations":["v"]}
{"type":"entity","name":"a-new","entityType":"t","observations":["a"],"createdAt":"2026-02-01T00:00:00Z","version":1}
{"type":"relation","from":"a-new","to":"base","relationType":"r","createdAt":"X"}
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	wantLost := []GraphLoss{
		{true, `entity "clash": entityType "earlier-type" lost to "later-type"`},
		{true, `entity "goneLater" deleted on the other side: its edits dropped`},
		{false, `entity "goneEarlier" deleted on the other side: its edits dropped`},
		{true, `relation "a-new" -> "goneLater" (r) dropped: "goneLater" deleted on the other side`},
		{false, `relation "v-new" -> "goneEarlier" (r) dropped: "goneEarlier" deleted on the other side`},
	}
	if !slices.Equal(lost, wantLost) {
		t.Errorf("lost\n%+v\nwant\n%+v", lost, wantLost)
	}
	// the same on the other machine's side of the merge: the result is a
	// function of which side recorded later, not of who merges
	if again, _ := MergeGraph([]byte(base), []byte(earlier), []byte(later)); string(again) != string(got) {
		t.Error("not deterministic")
	}
}

// On the real files: one side adds an observation to the first entity, the
// other adds an entity; every line of the file keeps its bytes, the edited
// one as the earlier side wrote it (createdAt, version and all).
func TestMergeGraphCorpusKeepsLines(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "corpus", "mcp-memory", "*"))
	if len(files) == 0 {
		t.Skip("no corpus at ../shared/corpus/mcp-memory")
	}
	tested := 0
	for _, f := range files {
		base, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g := graph.Parse(base)
		if len(g.Entities) == 0 {
			continue
		}
		tail := `{"type":"entity","name":"merge-test-new","entityType":"t","observations":[]}` + "\n"
		if !bytes.HasSuffix(base, []byte("\n")) {
			tail = "\n" + tail[:len(tail)-1]
		}
		tested++
		name := g.Entities[0].Name
		first := graph.EntityLines(base)[name]
		edited := bytes.Replace(first, []byte(`"observations":[`), []byte(`"observations":["merge-test",`), 1)
		if len(g.Entities[0].Observations) == 0 {
			edited = bytes.Replace(first, []byte(`"observations":[]`), []byte(`"observations":["merge-test"]`), 1)
		}
		if bytes.Equal(edited, first) {
			continue // not in the server's spelling
		}
		earlier := bytes.Replace(base, first, edited, 1)
		later := append(slices.Clone(base), tail...)
		got, lost := MergeGraph(base, earlier, later)
		if len(lost) != 0 {
			t.Errorf("%s: lost %+v", filepath.Base(f), lost)
		}
		want := append(slices.Clone(earlier), tail...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: merge changed bytes it had no reason to touch", filepath.Base(f))
		}
	}
	if tested == 0 {
		t.Skip("no corpus file holds an entity")
	}
}
