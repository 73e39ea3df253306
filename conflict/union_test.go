package conflict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/markdown"
	"github.com/strata-dev/strata/textdiff"
	"github.com/stretchr/testify/assert"
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
// version's lines in order, less lines of base the earlier one deleted, and
// every line the earlier one added.
func FuzzMergeMemory(f *testing.F) {
	f.Add("# M\n## L\n- a\n", "# M\n## L\n- a\n- b\n", "# M\n## L\n- a\n- c\n## N\ntext")
	f.Add("", "```\n- x\n", "---\nk: v\n---\r\n# T\r\n")
	f.Fuzz(func(t *testing.T, base, earlier, later string) {
		got, err := MergeMemory([]byte(base), []byte(earlier), []byte(later))
		if err != nil {
			return
		}
		gl := textdiffLines(string(got))
		count := func(s string) map[string]int {
			n := map[string]int{}
			for _, l := range textdiffLines(s) {
				n[strings.TrimRight(l, "\r")]++
			}
			return n
		}
		inBase, inEarlier := count(base), count(earlier)
		deleted := func(line string) bool { // by earlier: base had it more often
			line = strings.TrimRight(line, "\r")
			return inBase[line] > inEarlier[line]
		}
		j := 0
		for _, line := range textdiffLines(later) {
			if deleted(line) || deleted(line+"\r") {
				continue // it may go, and what earlier added may come before it
			}
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

// textdiffLines are the lines of s (as textdiff cuts them: "" has none)
// without their line endings.
func textdiffLines(s string) []string {
	var out []string
	for _, l := range textdiff.Lines([]byte(s)) {
		out = append(out, strings.TrimRight(l, "\r\n")) // a line's carriage returns belong to its end
	}
	return out
}

// FuzzMergeGraph: the merge never fails; with nothing done on the earlier
// side it is the later version byte for byte; an entity or observation the
// earlier side added is in the result unless the later side deleted it;
// every line of either side is in the result byte for byte, or its edits
// are in the result's line of the same entity or relation, or they are
// named as lost on that side, or the line is base's (that side left it);
// and the result ends its lines as the later version does when that uses
// one convention. Seeded with the tester's cases and, when present, the
// real files of ../shared/corpus/mcp-memory (edited on both sides).
func FuzzMergeGraph(f *testing.F) {
	seedGraphMerge(f)
	f.Fuzz(func(t *testing.T, base, earlier, later string) {
		if got, lost := MergeGraph([]byte(base), []byte(base), []byte(later)); string(got) != later || len(lost) != 0 {
			t.Fatalf("nothing done earlier, yet %q became %q, lost %v", later, got, lost)
		}
		merged, lost := MergeGraph([]byte(base), []byte(earlier), []byte(later))
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
			g, ok := entities(got)[en.Name] // the first well-formed line, as the merge reads it
			if !ok {
				t.Fatalf("entity %q lost", en.Name)
			}
			for _, o := range en.Observations {
				if !slices.Contains(bE[en.Name].Observations, o) && !slices.Contains(g.Observations, o) && !owned(en.Name, o) {
					t.Fatalf("observation %q of %q lost", o, en.Name)
				}
			}
			// strata's own observations of its entities are one side's
			if le, inLater := lE[en.Name]; inLater && graph.Keeps(en.Name) {
				if own := graph.Own(g); !slices.Equal(own, graph.Own(en)) && !slices.Equal(own, graph.Own(le)) {
					t.Fatalf("own observations of %q are %q: neither side's (%q, %q)", en.Name, own, graph.Own(en), graph.Own(le))
				}
			}
		}
		checkLinesKept(t, []byte(base), []byte(earlier), merged, lost, true)
		checkLinesKept(t, []byte(base), []byte(later), merged, lost, false)
		if le := graph.EndingOf([]byte(later)); le == graph.EndingLF || le == graph.EndingCRLF {
			if ge := graph.EndingOf(merged); ge != le && ge != graph.EndingNone {
				t.Fatalf("later version ends lines as %v, the merge as %v: %q", le, ge, merged)
			}
		}
	})
}

// checkLinesKept fails unless every line of side (earlierSide says which)
// is in got byte for byte ("\r"s before its "\n" aside), or is a line of
// base, or is the first line of an entity or relation whose edits since
// base are in got's first line of it, or an edit of its entity or relation
// is named in lost on that side.
func checkLinesKept(t *testing.T, base, side, got []byte, lost []GraphLoss, earlierSide bool) {
	t.Helper()
	norm := func(t []byte) string { return string(bytes.TrimRight(t, "\r")) }
	set := func(ls []graph.LineInfo) map[string]bool {
		m := map[string]bool{}
		for _, l := range ls {
			m[norm(l.Text)] = true
		}
		return m
	}
	firsts := func(ls []graph.LineInfo) map[string][]byte {
		m := map[string][]byte{}
		for _, l := range ls {
			if l.First {
				m[l.Key] = l.Text
			}
		}
		return m
	}
	bI, gI := graph.Lines(base), graph.Lines(got)
	inBase, inGot := set(bI), set(gI)
	bF, gF := firsts(bI), firsts(gI)
	for _, li := range graph.Lines(side) {
		if inGot[norm(li.Text)] || inBase[norm(li.Text)] {
			continue
		}
		if li.Key == "" {
			t.Fatalf("line %q of the %s side dropped:\n%q", li.Text, sideName(earlierSide), got)
		}
		what := fmt.Sprintf("entity %q", li.Name)
		if li.Relation != nil {
			what = fmt.Sprintf("relation %q -> %q (%s)", li.Relation.From, li.Relation.To, li.Relation.RelationType)
		}
		named := false
		for _, l := range lost {
			named = named || l.Earlier == earlierSide && strings.HasPrefix(l.What, what)
		}
		if named {
			continue
		}
		if !li.First {
			t.Fatalf("%s: line %q of the %s side dropped, not named:\n%q\nlost %+v", what, li.Text, sideName(earlierSide), got, lost)
		}
		if why := editsIn(bF[li.Key], li.Text, gF[li.Key]); why != "" {
			t.Fatalf("%s: the %s side's %s, not named:\n%q\nlost %+v", what, sideName(earlierSide), why, got, lost)
		}
	}
}

// owned reports whether o is one of strata's own observations of an
// entity it keeps: a merge takes those from one side, not both.
func owned(name, o string) bool {
	return len(graph.Own(graph.Entity{Name: name, Observations: []string{o}})) == 1
}

func sideName(earlier bool) string {
	if earlier {
		return "earlier"
	}
	return "later"
}

// editsIn says which edit of base that line made is not in got ("" when
// each is): a member's value (removal included), an observation added.
func editsIn(base, line, got []byte) string {
	if got == nil {
		return "line dropped"
	}
	var bm, lm, gm map[string]json.RawMessage
	json.Unmarshal(base, &bm)
	if json.Unmarshal(line, &lm) != nil || json.Unmarshal(got, &gm) != nil {
		return "line unreadable"
	}
	same := func(a, b json.RawMessage) bool {
		var ca, cb bytes.Buffer
		if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
			return bytes.Equal(a, b)
		}
		return bytes.Equal(ca.Bytes(), cb.Bytes())
	}
	for k, v := range lm {
		if bv, ok := bm[k]; ok && same(bv, v) {
			continue
		}
		if k == "observations" {
			var bo, lo, gobs []string
			json.Unmarshal(bm[k], &bo)
			json.Unmarshal(v, &lo)
			json.Unmarshal(gm[k], &gobs)
			var name string
			json.Unmarshal(lm["name"], &name)
			for _, o := range lo {
				if !slices.Contains(bo, o) && !slices.Contains(gobs, o) && !owned(name, o) {
					return fmt.Sprintf("observation %q dropped", o)
				}
			}
			continue
		}
		if gv, ok := gm[k]; !ok || !same(gv, v) {
			return fmt.Sprintf("%s %s dropped", k, v)
		}
	}
	for k := range bm {
		if _, ok := lm[k]; !ok && k != "observations" {
			if _, ok := gm[k]; ok {
				return fmt.Sprintf("removal of %s dropped", k)
			}
		}
	}
	return ""
}

// The graph merge keeps every member of an entity line, not only the three
// the reference server writes: a line only the earlier side changed comes
// whole, a line both changed keeps the later bytes with the earlier side's
// member changes applied, and a new entity comes as its line. Whatever it
// cannot keep it names: an entityType both sides changed (the later one
// stays), the edits of an entity the other side deleted, and a relation to
// a deleted entity.
// TestMergeGraphOwnObservationsOneSide: strata's own observations of its
// entities come from one side as a whole (the L1 file's side when told, else
// the side that changed them, else the later "updated:"); the agents' own
// observations are unioned as before.
func TestMergeGraphOwnObservationsOneSide(t *testing.T) {
	ws := func(obs string) string {
		return `{"type":"entity","name":"seed","entityType":"t","observations":[]}` + "\n" +
			`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":[` + obs + `]}` + "\n"
	}
	base := ws(`"type: APEX","phase: plan","updated: 2026-11-26T09:00:00Z"`)
	a := ws(`"type: APEX","phase: implement-on-A","updated: 2026-11-26T09:00:30Z","note a"`)
	b := ws(`"note b","type: APEX","phase: review-on-B","updated: 2026-11-26T09:00:32Z"`)
	got, lost := MergeGraph([]byte(base), []byte(a), []byte(b))
	assert.Empty(t, lost)
	assert.Equal(t, ws(`"note b","type: APEX","phase: review-on-B","updated: 2026-11-26T09:00:32Z","note a"`), string(got))
	// the side recorded earlier wrote the later "updated:"
	got, _ = MergeGraph([]byte(base), []byte(b), []byte(a))
	assert.Equal(t, ws(`"type: APEX","phase: review-on-B","updated: 2026-11-26T09:00:32Z","note a","note b"`), string(got))
	// told the L1 file's side: that one
	got, _ = MergeGraphFollow([]byte(base), []byte(a), []byte(b), map[string]bool{"workflow-state": true})
	assert.Equal(t, ws(`"note b","type: APEX","phase: implement-on-A","updated: 2026-11-26T09:00:30Z","note a"`), string(got))
	// only one side changed them: that side's, whatever the times
	onlyNote := ws(`"type: APEX","phase: plan","updated: 2026-11-26T09:00:00Z","note c"`)
	got, _ = MergeGraph([]byte(base), []byte(a), []byte(onlyNote))
	assert.Equal(t, ws(`"type: APEX","note c","phase: implement-on-A","updated: 2026-11-26T09:00:30Z","note a"`), string(got))
	// an entity strata does not keep still gets the union
	other := func(obs string) string {
		return `{"type":"entity","name":"x","entityType":"t","observations":[` + obs + `]}` + "\n"
	}
	got, _ = MergeGraph([]byte(other(`"phase: plan"`)), []byte(other(`"phase: a"`)), []byte(other(`"phase: b"`)))
	assert.Equal(t, other(`"phase: b","phase: a"`), string(got))
}

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

// The graph merge keeps what the member-by-entity merge used to drop
// silently, and names what it cannot keep: a relation's other members merge
// as an entity's do; a second line of an entity or relation (which the
// server does not read) and any other line merge as lines; the result ends
// its lines as the later version does.
func TestMergeGraphRelationsDuplicatesEndings(t *testing.T) {
	const (
		x    = `{"type":"entity","name":"X","entityType":"t","observations":["o1"]}`
		xB   = `{"type":"entity","name":"X","entityType":"t","observations":["o1","B"]}`
		y    = `{"type":"entity","name":"Y","entityType":"t","observations":[]}`
		rel  = `{"type":"relation","from":"X","to":"X","relationType":"r","note":"old"}`
		relA = `{"type":"relation","from":"X","to":"X","relationType":"r","note":"A-EDIT"}`
		relB = `{"type":"relation","from":"X","to":"X","relationType":"r","note":"B-EDIT"}`
		dup  = `{"type":"entity","name":"X","entityType":"t","observations":["A-SECOND-LINE"]}`
		dup2 = `{"type":"entity","name":"X","entityType":"t","observations":["changed second"]}`
		rdup = `{"type":"relation","from":"X","to":"X","relationType":"r","note":"second"}`
	)
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	crlf := func(ls ...string) string { return strings.Join(ls, "\r\n") + "\r\n" }
	const relX = `relation "X" -> "X" (r)`
	for _, c := range []struct {
		name                 string
		base, earlier, later string
		want                 string
		lost                 []GraphLoss
	}{{
		name:    "relation member only the earlier side changed",
		base:    lines(x, rel),
		earlier: lines(x, relA),
		later:   lines(xB, rel),
		want:    lines(xB, relA),
	}, {
		name:    "relation members each side changed",
		base:    lines(x, rel),
		earlier: lines(x, relA),
		later:   lines(x, `{"type":"relation","from":"X","to":"X","relationType":"r","note":"old","createdAt":"L"}`),
		want:    lines(x, `{"type":"relation","from":"X","to":"X","relationType":"r","note":"A-EDIT","createdAt":"L"}`),
	}, {
		name:    "relation member both changed: the later value stays, the earlier is named",
		base:    lines(x, rel),
		earlier: lines(x, relA),
		later:   lines(x, relB),
		want:    lines(x, relB),
		lost:    []GraphLoss{{true, relX + `: note "A-EDIT" lost to "B-EDIT"`}},
	}, {
		name:    "relation member the earlier side removed and the later changed",
		base:    lines(x, rel),
		earlier: lines(x, `{"type":"relation","from":"X","to":"X","relationType":"r"}`),
		later:   lines(x, relB),
		want:    lines(x, relB),
		lost:    []GraphLoss{{true, relX + `: removal of note lost to "B-EDIT"`}},
	}, {
		name:    "relation both added with different members",
		base:    lines(x),
		earlier: lines(x, relA),
		later:   lines(x, `{"type":"relation","from":"X","to":"X","relationType":"r","createdAt":"L"}`),
		want:    lines(x, `{"type":"relation","from":"X","to":"X","relationType":"r","createdAt":"L","note":"A-EDIT"}`),
	}, {
		name:    "relation the earlier side edited and the later deleted",
		base:    lines(x, rel),
		earlier: lines(x, relA),
		later:   lines(xB),
		want:    lines(xB),
		lost:    []GraphLoss{{true, relX + ` deleted on the other side: its edits dropped`}},
	}, {
		name:    "relation the later side edited and the earlier deleted",
		base:    lines(x, rel),
		earlier: lines(xB),
		later:   lines(x, relB),
		want:    lines(xB),
		lost:    []GraphLoss{{false, relX + ` deleted on the other side: its edits dropped`}},
	}, {
		name:    "the tester's repro: a relation edit and a second line of an entity",
		base:    lines(x, rel),
		earlier: lines(x, relA, dup),
		later:   lines(xB, rel),
		want:    lines(xB, relA, dup),
	}, {
		name:    "a second line of an entity goes after the first, whatever precedes it",
		base:    lines(x, y),
		earlier: lines(x, y, dup),
		later:   lines(y, xB),
		want:    lines(y, xB, dup),
	}, {
		name:    "a second line of an entity the later side deleted",
		base:    lines(x, y),
		earlier: lines(x, y, dup),
		later:   lines(y),
		want:    lines(y),
		lost:    []GraphLoss{{true, `entity "X" deleted on the other side: its edits dropped`}},
	}, {
		name:    "a second line of an entity the earlier side deleted, with the later's own second line",
		base:    lines(x, y),
		earlier: lines(y),
		later:   lines(x, y, dup),
		want:    lines(y),
		lost:    []GraphLoss{{false, `entity "X" deleted on the other side: its edits dropped`}},
	}, {
		name:    "a second line the earlier side changed",
		base:    lines(x, dup, y),
		earlier: lines(x, dup2, y),
		later:   lines(xB, dup, y),
		want:    lines(xB, dup2, y),
	}, {
		name:    "a second line the later side deleted stays deleted",
		base:    lines(x, dup, y),
		earlier: lines(x, dup, y, `{"type":"entity","name":"Z","entityType":"t","observations":[]}`),
		later:   lines(x, y),
		want:    lines(x, y, `{"type":"entity","name":"Z","entityType":"t","observations":[]}`),
	}, {
		name:    "a second line of a relation",
		base:    lines(x, rel),
		earlier: lines(x, rel, rdup),
		later:   lines(xB, rel),
		want:    lines(xB, rel, rdup),
	}, {
		name:    "a line that is neither, and a blank line",
		base:    lines(x, y),
		earlier: lines(x, `{"type":"note","text":"kept"}`, "", y),
		later:   lines(xB, y),
		want:    lines(xB, `{"type":"note","text":"kept"}`, "", y),
	}, {
		name:    "the earlier side converted to CRLF and added a blank line: the later LF stays",
		base:    lines(x, y),
		earlier: crlf(`{"type":"entity","name":"X","entityType":"t","observations":["o1","A"]}`, "", y),
		later:   lines(x, y, rel),
		want:    lines(`{"type":"entity","name":"X","entityType":"t","observations":["o1","A"]}`, "", y, rel),
	}, {
		name:    "the later side converted to CRLF: new lines end so too",
		base:    lines(x),
		earlier: lines(x, y) + `{"type":"note"}`,
		later:   crlf(xB),
		want:    crlf(xB, y, `{"type":"note"}`),
	}, {
		name:    "a later side without a final newline in CRLF",
		base:    lines(x, rel),
		earlier: lines(x, rel, `{"type":"note"}`),
		later:   xB + "\r\n" + rel,
		want:    crlf(xB, rel) + `{"type":"note"}`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			got, lost := MergeGraph([]byte(c.base), []byte(c.earlier), []byte(c.later))
			if string(got) != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
			if !slices.Equal(lost, c.lost) {
				t.Errorf("lost\n%+v\nwant\n%+v", lost, c.lost)
			}
			if e := graph.EndingOf(got); e == graph.EndingMixed {
				t.Errorf("mixed line endings: %q", got)
			}
		})
	}
}

// seedGraphMerge seeds a graph merge fuzz test with the tester's cases and,
// when present, the real files of ../shared/corpus/mcp-memory (edited on
// both sides).
func seedGraphMerge(f *testing.F) {
	f.Add(`{"type":"entity","name":"A","entityType":"t","observations":["1"]}`+"\n",
		`{"type":"entity","name":"A","entityType":"t","observations":["1","2"]}`+"\n"+`{"type":"entity","name":"B","entityType":"t","observations":[]}`,
		`not json`+"\n"+`{"type":"entity","name":"A","entityType":"t","observations":["1","3"]}`+"\n")
	x := `{"type":"entity","name":"X","entityType":"t","observations":["o1"]}`
	rel := `{"type":"relation","from":"X","to":"X","relationType":"r","note":"old"}`
	f.Add(x+"\n"+rel+"\n",
		x+"\n"+`{"type":"relation","from":"X","to":"X","relationType":"r","note":"A-EDIT"}`+"\n"+
			`{"type":"entity","name":"X","entityType":"t","observations":["A-SECOND-LINE"]}`+"\n",
		`{"type":"entity","name":"X","entityType":"t","observations":["o1","B"]}`+"\n"+rel+"\n")
	f.Add(x+"\n"+rel+"\n", x+"\r\n\r\n"+rel+"\r\n", x+"\n"+`{"type":"relation","from":"X","to":"X","relationType":"r","note":"B"}`+"\n")
	ws := func(obs string) string {
		return `{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":[` + obs + `]}` + "\n"
	}
	f.Add(ws(`"type: APEX","phase: plan","updated: 2026-11-26T09:00:00Z"`),
		ws(`"type: APEX","phase: a","updated: 2026-11-26T09:00:30Z","note a"`)+`{"type":"entity","name":"workflow-state","entityType":"t","observations":["phase: 2nd"]}`,
		ws(`"note b","type: APEX","phase: b","updated: 2026-11-26T09:00:32Z"`))
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "corpus", "mcp-memory", "*"))
	if len(files) == 0 {
		f.Log("no corpus at ../shared/corpus/mcp-memory: seeded without the real files")
	}
	for _, name := range files {
		base, err := os.ReadFile(name)
		if err != nil || len(base) > 16<<10 {
			continue // keep the seeds quick to mutate
		}
		ls := strings.SplitAfter(string(base), "\n")
		earlier := slices.Clone(ls)
		for i, l := range earlier { // a note on the first relation, a second line of the first entity
			if strings.Contains(l, `"type":"relation"`) {
				earlier[i] = strings.Replace(l, "}", `,"note":"earlier"}`, 1)
				break
			}
		}
		earlier = append(earlier, "\n", strings.TrimRight(ls[0], "\n")+"\n")
		later := strings.Replace(string(base), `"observations":[`, `"observations":["later",`, 1)
		f.Add(string(base), strings.Join(earlier, ""), later)
		f.Add(string(base), strings.ReplaceAll(strings.Join(earlier, ""), "\n", "\r\n"), later)
	}
}

// Past mergeParseBudget the runs of lines the earlier side added go at
// the end of the later version, in order, unplaced: placing each parses
// the file the merge builds, so a remote's ~2 000 runs in a file of
// megabytes cost hours. Every new line is still there, and the later
// version's bytes come first, unchanged.
func TestMergeMemoryPastParseBudget(t *testing.T) {
	defer func(b int) { mergeParseBudget = b }(mergeParseBudget)
	base := "# M\n## A\n- a1\n## B\n- b1\n"
	earlier := "# M\n## A\n- a1\n- a2\n## B\n- b1\n- b2\n"
	later := "# M\n## A\n- a1\n- l\n## B\n- b1\n"
	for budget, want := range map[int]string{
		32 << 20: "# M\n## A\n- a1\n- a2\n- l\n## B\n- b1\n- b2\n",
		1:        later + "- a2\n- b2\n",
	} {
		mergeParseBudget = budget
		got, err := MergeMemory([]byte(base), []byte(earlier), []byte(later))
		if err != nil || string(got) != want {
			t.Errorf("budget %d: got %q, %v; want %q", budget, got, err, want)
		}
	}
}

// A line one side deleted, or edited, stays deleted when the other side
// left it as it was, as a three-way merge (git merge-file) takes it; before,
// every line of base came back at the next sync (attack18-layers 1, 1b).
func TestMergeMemoryTakesDeletions(t *testing.T) {
	for _, tt := range []struct{ name, base, earlier, later, want string }{
		{"deleted on one side, added on the other",
			"# Mem\n\n## Learnings\n- keep one\n- delete me\n- keep two\n",
			"# Mem\n\n## Learnings\n- keep one\n- keep two\n",
			"# Mem\n\n## Learnings\n- keep one\n- delete me\n- keep two\n- added on B\n",
			"# Mem\n\n## Learnings\n- keep one\n- keep two\n- added on B\n"},
		{"the later side deleted, the earlier added",
			"## L\n- a\n- b\n", "## L\n- a\n- b\n- c\n", "## L\n- b\n", "## L\n- b\n- c\n"},
		{"edited on one side: its old form goes",
			"## L\n- a\n- b\n", "## L\n- a EDITED\n- b\n", "## L\n- a\n- b\n- c\n", "## L\n- a EDITED\n- b\n- c\n"},
		{"each side deleted another line",
			"## L\n- a\n- b\n- c\n- d\n", "## L\n- b\n- c\n- d\n", "## L\n- a\n- b\n- c\n", "## L\n- b\n- c\n"},
		{"deleted in one section, added in another",
			"## L\n- x\n- z\n\n## M\n- m\n", "## L\n- z\n\n## M\n- m\n", "## L\n- x\n- z\n\n## M\n- m\n- y\n", "## L\n- z\n\n## M\n- m\n- y\n"},
		{"a line deleted on both sides goes once",
			"## L\n- a\n- b\n", "## L\n- b\n", "## L\n- b\n- c\n", "## L\n- b\n- c\n"},
		{"edited on the other side: the edit stays",
			"## L\n- a\n- b\n", "## L\n- b\n", "## L\n- a changed\n- b\n", "## L\n- a changed\n- b\n"},
		{"the last line, without a line end, deleted",
			"## L\r\n- a\r\n- b", "## L\r\n- a\r\n", "## L\r\n- c\r\n- a\r\n- b", "## L\r\n- c\r\n- a\r\n"},
		{"both sides made the same section: each side's line goes under it (attack18-verify N3)",
			"# Mem\n\n## L\n- a\n", "# Mem\n\n## L\n- a\n\n## Workflow state\n- A line\n", "# Mem\n\n## L\n- a\n\n## Workflow state\n- B line\n",
			"# Mem\n\n## L\n- a\n\n## Workflow state\n- A line\n- B line\n"},
		{"one side re-wrote the file with LF: its new line goes where it was added (attack18-verify N3)",
			"## L\r\n- a\r\n- b\r\n", "## L\n- a\n- b\n- fromA\n", "## L\r\n- a\r\n- b\r\n- fromB\r\n",
			"## L\r\n- a\r\n- b\r\n- fromA\r\n- fromB\r\n"},
		{"the oldest of 20 capped lines",
			"## W\n- p1\n- p2\n- p3\n", "## W\n- p2\n- p3\n- p4\n", "## W\n- p1\n- p2\n- p3\n\n## L\n- new\n", "## W\n- p2\n- p3\n- p4\n\n## L\n- new\n"},
	} {
		got, err := MergeMemory([]byte(tt.base), []byte(tt.earlier), []byte(tt.later))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s:\ngot  %q (%v)\nwant %q", tt.name, got, err, tt.want)
		}
	}
}

// A line one side's writer was still writing when it was recorded (the
// last line, no line end) stays last and unended in the merge, so that
// the rest of the write completes it; ended and put among the other
// side's lines, the rest became a line of its own (attack41 F1).
func TestMergeMemoryKeepsUnendedTailLast(t *testing.T) {
	const base = "# Memory\n\n## Learnings\n- l1\n"
	for _, c := range []struct{ earlier, later, want string }{
		{base + "- B1 half", base + "- A1\n", base + "- A1\n- B1 half"},
		{base + "- B1 half", base + "- A1\n- B1 half\n", base + "- A1\n- B1 half\n"},
		{base + "- A1\n", base + "- B1 half", base + "- A1\n- B1 half"},
		{base + "- ", base + "- A1\n", base + "- A1\n- "},
		// later's unended last line stays last when earlier's lines go at
		// the end (a section it added): ended among them, the rest of the
		// write became a line of its own (attack42 F3)
		{base + "\n## Other\n- A1\n", base + "- B1 half", base + "\n## Other\n- A1\n- B1 half"},
		{base + "- A0\n\n## Other\n- A1\n", base + "- B1 half", base + "- A0\n\n## Other\n- A1\n- B1 half"},
	} {
		got, err := MergeMemory([]byte(base), []byte(c.earlier), []byte(c.later))
		if err != nil || string(got) != c.want {
			t.Errorf("MergeMemory(%q, %q) = %q, %v; want %q", c.earlier, c.later, got, err, c.want)
		}
	}
}
