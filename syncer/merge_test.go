package syncer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/markdown"
)

const graphPath = ".claude/memory.jsonl"

// memoryAdd is `strata memory add TEXT` on m: one learning appended to the
// Learnings section, written and recorded at m's clock (which does not tick:
// the two machines' edits fall in the same second).
func (m *machine) memoryAdd(text string) {
	m.tb.Helper()
	cur := m.read(memPath)
	if cur == "<absent>" {
		cur = ""
	}
	out, _, err := markdown.AddItem([]byte(cur), "Learnings", 0, text)
	if err != nil {
		m.tb.Fatal(err)
	}
	m.write(memPath, string(out))
	paths, err := m.eng.AllPaths()
	if err != nil {
		m.tb.Fatal(err)
	}
	if _, err := m.eng.Record(paths, "memory"); err != nil {
		m.tb.Fatal(err)
	}
}

func TestSameSecondMemoryEditsBothKept(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	a.write(memPath, "# Memory\n\n## Learnings\n- first\n\n## Notes\nkeep this text\n")
	a.record()
	a.sync()
	b.sync()
	b.now = a.now
	a.memoryAdd("learned on a")
	b.memoryAdd("learned on b")
	ra := a.sync()
	rb := b.sync()
	a.sync()
	want := "# Memory\n\n## Learnings\n- first\n- learned on "
	for _, m := range []*machine{a, b} {
		got := m.read(memPath)
		if !strings.Contains(got, "- learned on a\n") || !strings.Contains(got, "- learned on b\n") ||
			!strings.HasPrefix(got, want) || !strings.HasSuffix(got, "\n\n## Notes\nkeep this text\n") {
			t.Errorf("%s: MEMORY.md =\n%s", m.name, got)
		}
	}
	if a.read(memPath) != b.read(memPath) {
		t.Errorf("the machines disagree")
	}
	if len(ra.Lost)+len(rb.Lost) != 0 {
		t.Errorf("nothing was lost, reports say %+v / %+v", ra.Lost, rb.Lost)
	}
	if len(rb.Decisions) != 1 || !rb.Decisions[0].MergedBoth {
		t.Errorf("b's decisions = %+v, want one merge", rb.Decisions)
	}
	w.fsckAll()
}

func TestSameSecondGraphEditsBothKept(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	base := `{"type":"entity","name":"proj","entityType":"project","observations":["o1"]}` + "\n"
	a.write(graphPath, base)
	a.record()
	a.sync()
	b.sync()
	b.now = a.now
	a.write(graphPath, `{"type":"entity","name":"proj","entityType":"project","observations":["o1","from a"]}`+"\n"+
		`{"type":"entity","name":"A","entityType":"t","observations":[]}`+"\n")
	a.record()
	b.write(graphPath, `{"type":"entity","name":"proj","entityType":"project","observations":["o1","from b"]}`+"\n"+
		`{"type":"relation","from":"proj","to":"proj","relationType":"self"}`+"\n")
	b.record()
	a.sync()
	b.sync()
	a.sync()
	for _, m := range []*machine{a, b} {
		got := m.read(graphPath)
		for _, s := range []string{`"from a"`, `"from b"`, `"name":"A"`, `"relationType":"self"`} {
			if !strings.Contains(got, s) {
				t.Errorf("%s: %s lost:\n%s", m.name, s, got)
			}
		}
	}
	if a.read(graphPath) != b.read(graphPath) {
		t.Errorf("the machines disagree:\n%s\n%s", a.read(graphPath), b.read(graphPath))
	}
	w.fsckAll()
}

func TestCompletedInitiativeNotRegressedBySync(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	a.write(initPath, initiative("in_progress"))
	a.record()
	a.sync()
	b.sync()
	a.write(initPath, initiative("completed"))
	a.record()
	a.sync()
	b.now = a.now.Add(time.Minute) // b edits later, still in progress
	// the same initiative (one name): another name would be a new one
	b.write(initPath, strings.Replace(initiative("in_progress"), `10:00:00Z`, `10:05:00Z`, 1))
	b.record()
	rb := b.sync()
	a.sync()
	for _, m := range []*machine{a, b} {
		if got := m.read(initPath); got != initiative("completed") {
			t.Errorf("%s: %q, want the completed initiative", m.name, got)
		}
	}
	if len(rb.Lost) != 1 || rb.Lost[0].Path != initPath {
		t.Errorf("b lost its edit without being told: %+v", rb.Lost)
	}
	if len(rb.Decisions) != 1 || rb.Decisions[0].Why == "" {
		t.Errorf("decisions = %+v, want the history rule named", rb.Decisions)
	}
	w.fsckAll()
}

func TestPhaseOutcomeSameNameKeepsBoth(t *testing.T) {
	w, a, b := syncedPair(t)
	b.now = a.now
	outcome := func(who string) string {
		return "# written on " + who + "\nphase: plan\nfeature: auth\nproduced: []\nfindings: []\npending_decisions: []\n"
	}
	const p, p2 = "PhaseOutcomes/auth/001-plan.yaml", "PhaseOutcomes/auth/002-plan.yaml"
	a.write(p, outcome("a"))
	a.record()
	b.write(p, outcome("b"))
	b.record()
	a.sync()
	b.sync()
	a.sync()
	for _, m := range []*machine{a, b} {
		got := []string{m.read(p), m.read(p2)}
		if !(got[0] == outcome("a") && got[1] == outcome("b") || got[0] == outcome("b") && got[1] == outcome("a")) {
			t.Errorf("%s: %q", m.name, got)
		}
	}
	if a.read(p) != b.read(p) {
		t.Errorf("the machines disagree")
	}
	w.fsckAll()
}

func TestLosingSideIsToldAndStatusNamesIt(t *testing.T) {
	_, a, b := syncedPair(t)
	a.write(wsPath, ws("design"))
	a.record()
	b.now = a.now.Add(time.Minute)
	b.write(wsPath, ws("build"))
	b.record()
	b.sync()       // b's later edit wins; the remote has it
	ra := a.sync() // a merges: its version lost
	if len(ra.Lost) != 1 || ra.Lost[0].Path != wsPath || ra.Lost[0].Rev == "" {
		t.Fatalf("a's report: lost = %+v", ra.Lost)
	}
	got, err := a.eng.Show(wsPath, engine.Point{Rev: ra.Lost[0].Rev})
	if err != nil || string(got) != ws("design") {
		t.Fatalf("--rev %s holds %q, %v; want a's lost version", ra.Lost[0].Rev, got, err)
	}
	ls, err := Losses(a.eng)
	if err != nil || len(ls) != 1 || ls[0].Path != wsPath {
		t.Fatalf("status losses = %+v, %v", ls, err)
	}
	// b's merge had a decision that kept b's side; a fast-forward to a
	// merge made elsewhere also tells the losing side
	c := newWorld(t, "c", "d")
	cm, dm := c.ms[0], c.ms[1]
	cm.write(wsPath, ws("plan"))
	cm.record()
	cm.sync()
	dm.sync()
	cm.write(wsPath, ws("design"))
	cm.record()
	cm.sync()
	dm.now = cm.now.Add(time.Minute)
	dm.write(wsPath, ws("build"))
	dm.record()
	dm.sync() // d merges, its own version wins, pushes
	rc := cm.sync()
	if rc.Result != "fast-forward" || len(rc.Lost) != 1 || rc.Lost[0].Path != wsPath {
		t.Fatalf("c: %s, lost = %+v", rc.Result, rc.Lost)
	}
	// recorded again: no longer named
	a.write(wsPath, ws("verify"))
	a.record()
	a.sync()
	if ls, _ := Losses(a.eng); len(ls) != 0 {
		t.Errorf("losses after a new edit = %+v", ls)
	}
}

// TestHundredRoundsOfSameSecondEdits runs 100 rounds of two machines each
// adding a learning in the same second, then syncing both ways, and checks
// that every learning is on both machines.
func TestHundredRoundsOfSameSecondEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	a.write(memPath, "# Memory\n\n## Learnings\n")
	a.record()
	a.sync()
	b.sync()
	const rounds = 100
	var added []string
	for r := 0; r < rounds; r++ {
		b.now = a.now
		ta, tb := fmt.Sprintf("round %d on a", r), fmt.Sprintf("round %d on b", r)
		a.memoryAdd(ta)
		b.memoryAdd(tb)
		added = append(added, ta, tb)
		if r%2 == 0 {
			a.sync()
			b.sync()
			a.sync()
		} else {
			b.sync()
			a.sync()
			b.sync()
		}
	}
	kept := 0
	for _, text := range added {
		if strings.Contains(a.read(memPath), "- "+text+"\n") && strings.Contains(b.read(memPath), "- "+text+"\n") {
			kept++
		}
	}
	t.Logf("%d of %d same-second concurrent edits kept on both machines over %d rounds", kept, len(added), rounds)
	if kept != len(added) {
		t.Fatalf("kept %d of %d edits", kept, len(added))
	}
	if a.read(memPath) != b.read(memPath) {
		t.Fatal("the machines disagree")
	}
	w.fsckAll()
}

// Two machines resolve the same decision under the same file name: neither
// resolution overwrites the other; the later one is kept under the next
// free number (where status shows it as a second resolution to sort out).
func TestResolutionSameNameKeepsBoth(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	const outcome = "phase: plan\nfeature: auth\nproduced: []\nfindings: []\npending_decisions:\n  - {id: D-001, type: design, question: \"rotate?\", options: [rotate, keep], recommended: rotate}\n"
	a.write("PhaseOutcomes/auth/001-plan.yaml", outcome)
	a.record()
	a.sync()
	b.sync()
	b.now = a.now
	res := func(choice string) string {
		return "resolves: D-001\noutcome: 001-plan.yaml\nchoice: " + choice + "\nby: someone\nat: 2026-11-22T10:00:00Z\n"
	}
	const p, p2 = "PhaseOutcomes/auth/002-resolution-D-001.yaml", "PhaseOutcomes/auth/003-resolution-D-001.yaml"
	a.write(p, res("rotate"))
	a.record()
	b.write(p, res("keep"))
	b.record()
	a.sync()
	rb := b.sync()
	a.sync()
	for _, m := range []*machine{a, b} {
		got := []string{m.read(p), m.read(p2)}
		if !(got[0] == res("rotate") && got[1] == res("keep") || got[0] == res("keep") && got[1] == res("rotate")) {
			t.Errorf("%s: %q", m.name, got)
		}
	}
	if len(rb.Lost) != 0 {
		t.Errorf("lost = %+v", rb.Lost)
	}
	w.fsckAll()
}

// A graph merge that cannot keep an edit says so: b's observation on an
// entity a deleted is dropped (the deletion wins), and b's sync reports
// "both sides' edits kept except: ..." naming it and b's commit, in its
// report and the merge commit, instead of "both sides' edits kept"; the
// edit being b's own, b's report and status name its local version as
// lost, with the restore. Members other than the server's three survive.
func TestGraphMergeNamesWhatItDrops(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	a.write(graphPath, `{"type":"entity","name":"keep","entityType":"t","observations":["k"],"createdAt":"2026-01-14T22:28:02Z","version":1}`+"\n"+
		`{"type":"entity","name":"gone","entityType":"t","observations":["g"]}`+"\n")
	a.record()
	a.sync()
	b.sync()
	a.write(graphPath, `{"type":"entity","name":"keep","entityType":"t","observations":["k","a's"],"createdAt":"2026-01-14T22:28:02Z","version":2}`+"\n")
	a.record()
	b.now = a.now.Add(time.Second)
	b.write(graphPath, `{"type":"entity","name":"keep","entityType":"t","observations":["k"],"createdAt":"2026-01-14T22:28:02Z","version":1}`+"\n"+
		`{"type":"entity","name":"gone","entityType":"t","observations":["g","b's edit"]}`+"\n")
	b.record()
	bEdit := git(t, b.dir, "rev-parse", "refs/strata/state")
	a.sync()
	rb := b.sync()
	a.sync()
	if len(rb.Decisions) != 1 || !rb.Decisions[0].MergedBoth || len(rb.Decisions[0].Dropped) != 1 ||
		rb.Decisions[0].Dropped[0] != `entity "gone" deleted on the other side: its edits dropped (`+bEdit[:10]+`)` {
		t.Errorf("b's decisions = %+v, want one merge naming the dropped edit", rb.Decisions)
	}
	msg := git(t, b.dir, "log", "-1", "--format=%B", "refs/strata/state")
	if !strings.Contains(msg, `merged .claude/memory.jsonl: both sides' edits kept except: entity "gone" deleted`) {
		t.Errorf("merge commit message:\n%s", msg)
	}
	if len(rb.Lost) != 1 || rb.Lost[0].Rev != bEdit {
		t.Errorf("b's lost = %+v, want its version %s", rb.Lost, bEdit)
	}
	if lost, err := Losses(b.eng); err != nil || len(lost) != 1 {
		t.Errorf("status's losses = %+v, %v", lost, err)
	}
	want := `{"type":"entity","name":"keep","entityType":"t","observations":["k","a's"],"createdAt":"2026-01-14T22:28:02Z","version":2}` + "\n"
	for _, m := range []*machine{a, b} {
		if got := m.read(graphPath); got != want {
			t.Errorf("%s: graph =\n%s", m.name, got)
		}
	}
	w.fsckAll()
}

// The tester's repro on two machines: a (recording earlier) edits a
// relation's note and adds a second line for entity X; b (later) adds an
// observation to X. a's sync merges: both edits stay, nothing is named
// lost, and b's next sync converges on the same bytes.
func TestGraphMergeKeepsRelationEditsAndSecondLines(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	const (
		x   = `{"type":"entity","name":"X","entityType":"t","observations":["o1"]}`
		rel = `{"type":"relation","from":"X","to":"X","relationType":"r","note":"old"}`
	)
	a.write(graphPath, x+"\n"+rel+"\n")
	a.record()
	a.sync()
	b.sync()
	relA := `{"type":"relation","from":"X","to":"X","relationType":"r","note":"A-EDIT"}`
	second := `{"type":"entity","name":"X","entityType":"t","observations":["A-SECOND-LINE"]}`
	a.write(graphPath, x+"\n"+relA+"\n"+second+"\n")
	a.record()
	b.now = a.now.Add(time.Second)
	xB := `{"type":"entity","name":"X","entityType":"t","observations":["o1","B"]}`
	b.write(graphPath, xB+"\n"+rel+"\n")
	b.record()
	b.sync()
	ra := a.sync()
	b.sync()
	if len(ra.Decisions) != 1 || !ra.Decisions[0].MergedBoth || len(ra.Decisions[0].Dropped) != 0 {
		t.Errorf("a's decisions = %+v, want one merge keeping both", ra.Decisions)
	}
	if len(ra.Lost) != 0 {
		t.Errorf("a's lost = %+v", ra.Lost)
	}
	want := xB + "\n" + relA + "\n" + second + "\n"
	for _, m := range []*machine{a, b} {
		if got := m.read(graphPath); got != want {
			t.Errorf("%s: graph =\n%s\nwant\n%s", m.name, got, want)
		}
	}
	w.fsckAll()
}

// What a graph merge cannot keep of a relation it names, as for entities:
// both machines changed X's relation note, b later; a's note is lost to
// b's, and a's sync says so with a's commit, names a's local version as
// lost (with its restore), and status keeps naming it. a's CRLF conversion
// gives way to b's LF: no line ends mixed.
func TestGraphMergeNamesARelationEditItDrops(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	const x = `{"type":"entity","name":"X","entityType":"t","observations":["o1"]}`
	rel := func(note string) string {
		return `{"type":"relation","from":"X","to":"X","relationType":"r","note":"` + note + `"}`
	}
	a.write(graphPath, x+"\n"+rel("old")+"\n")
	a.record()
	a.sync()
	b.sync()
	a.write(graphPath, x+"\r\n\r\n"+rel("A-EDIT")+"\r\n")
	a.record()
	aEdit := git(t, a.dir, "rev-parse", "refs/strata/state")
	b.now = a.now.Add(time.Second)
	b.write(graphPath, x+"\n"+rel("B-EDIT")+"\n")
	b.record()
	b.sync()
	ra := a.sync()
	b.sync()
	wantDrop := `relation "X" -> "X" (r): note "A-EDIT" lost to "B-EDIT" (` + aEdit[:10] + `)`
	if len(ra.Decisions) != 1 || !ra.Decisions[0].MergedBoth || len(ra.Decisions[0].Dropped) != 1 ||
		ra.Decisions[0].Dropped[0] != wantDrop {
		t.Errorf("a's decisions = %+v, want one merge naming %s", ra.Decisions, wantDrop)
	}
	msg := git(t, a.dir, "log", "-1", "--format=%B", "refs/strata/state")
	if !strings.Contains(msg, `merged .claude/memory.jsonl: both sides' edits kept except: `+wantDrop) {
		t.Errorf("merge commit message:\n%s", msg)
	}
	if len(ra.Lost) != 1 || ra.Lost[0].Rev != aEdit {
		t.Errorf("a's lost = %+v, want its version %s", ra.Lost, aEdit)
	}
	if lost, err := Losses(a.eng); err != nil || len(lost) != 1 {
		t.Errorf("status's losses = %+v, %v", lost, err)
	}
	want := x + "\n\n" + rel("B-EDIT") + "\n"
	for _, m := range []*machine{a, b} {
		if got := m.read(graphPath); got != want {
			t.Errorf("%s: graph =\n%q\nwant\n%q", m.name, got, want)
		}
	}
	w.fsckAll()
}
