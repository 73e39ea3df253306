package syncer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// A version b's own rules refuse (here: over b's max_size) while b holds
// no version of that file is not taken on b, but stays the shared state:
// b's merge keeps it in its tree and b's disk is not written, so a, taking
// that merge, keeps its file (attack25 recheck N3: a's 15 MB file was
// deleted by a joiner with a 10 MB max_size, and `restore PATH` could not
// bring it back). b's status says "not taken", its records see no
// deletion, and its later syncs have nothing to push for it; a newer
// version b refuses again moves the shared state all the same.
func TestVersionRefusedByOwnRulesStaysShared(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	if err := os.WriteFile(filepath.Join(b.dir, config.FileName), []byte("max_size: 2KB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.reopen()
	const big = ".claude/delegation-log.json"
	content := func(n int) string { return `{"entries": [], "note": "` + strings.Repeat("x", n) + `"}` + "\n" }
	a.write(big, content(4096))
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync()
	b.write(".claude/b.json", `{"b": 1}`+"\n")
	b.record() // b's own history: its sync writes a merge of two parents
	rb := b.sync()
	if len(rb.Decisions) != 1 || rb.Decisions[0].Path != big || !rb.Decisions[0].NotTaken || !strings.Contains(rb.Decisions[0].KeptLocal, "over max_size 2048") {
		t.Fatalf("b: decisions %+v, want %s not taken, over its max_size", rb.Decisions, big)
	}
	if got := b.read(big); got != "<absent>" {
		t.Fatalf("b wrote %s: %d bytes", big, len(got))
	}
	shared := func(want string) {
		t.Helper()
		if got := git(t, w.remote, "rev-parse", "refs/strata/state:"+big); got != blobIn(t, w.remote, want) {
			t.Fatalf("the remote's %s is %s, want a's version", big, got)
		}
	}
	shared(content(4096))
	stateOf := func(m *machine, path string) string {
		st, err := m.eng.Status()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range st {
			if f.Path == path {
				return f.State
			}
		}
		return "<unlisted>"
	}
	if got := stateOf(b, big); got != "not taken" {
		t.Fatalf("b's status of %s: %s, want not taken", big, got)
	}
	ra := a.sync()
	if len(ra.Lost) != 0 || len(ra.Deleted) != 0 || a.read(big) != content(4096) {
		t.Fatalf("a: lost %+v, deleted %v, %s is %d bytes; want its file kept", ra.Lost, ra.Deleted, big, len(a.read(big)))
	}
	ents, err := a.eng.Log(state.LogQuery{Path: big})
	if err != nil || len(ents) == 0 || ents[0].Action == state.ActionDelete {
		t.Fatalf("a: log %s = %+v, %v; want no deletion", big, ents, err)
	}
	// stable on b: nothing to record, nothing to push, no decision again
	if un, err := b.eng.Unrecorded(); err != nil || len(un) != 0 {
		t.Fatalf("b: unrecorded %+v, %v; want none", un, err)
	}
	head := git(t, w.remote, "rev-parse", "refs/strata/state")
	if rb := b.sync(); rb.Pushed || len(rb.Decisions) != 0 || len(rb.Recorded) != 0 {
		t.Fatalf("b again: pushed %v, decisions %+v, recorded %v; want nothing", rb.Pushed, rb.Decisions, rb.Recorded)
	}
	if got := git(t, w.remote, "rev-parse", "refs/strata/state"); got != head {
		t.Fatalf("b's second sync moved the remote")
	}
	// a newer version, refused by b again, is the shared state
	a.write(big, content(5000))
	a.record()
	a.sync()
	if rb := b.sync(); len(rb.Decisions) != 1 || !rb.Decisions[0].NotTaken || b.read(big) != "<absent>" {
		t.Fatalf("b: decisions %+v, %s %d bytes", rb.Decisions, big, len(b.read(big)))
	}
	if ra := a.sync(); len(ra.Lost) != 0 || a.read(big) != content(5000) {
		t.Fatalf("a: lost %+v, %s %d bytes", ra.Lost, big, len(a.read(big)))
	}
	shared(content(5000))
	if got := stateOf(b, big); got != "not taken" {
		t.Fatalf("b's status of %s: %s, want not taken", big, got)
	}
	// b's own version, once made, is recorded over the shared one as an edit
	b.write(big, content(10))
	b.record()
	b.sync()
	a.sync()
	if got := a.read(big); got != content(10) {
		t.Fatalf("a: %s is %d bytes, want b's edit", big, len(got))
	}
	w.fsckAll()
}

// A deletion log PATH shows on a machine fast-forwarded to another's merge
// is compared against the commit this machine's ref stood at, the merge's
// second parent: `restore PATH` brings back the version held there, not
// "not recorded at" the first parent, which never held it (attack25
// recheck N3).
func TestRestoreAfterDeletionInAMergeFastForwarded(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	const notes, other = ".claude/notes.json", ".claude/other.json"
	a.write(wsPath, ws("plan"))
	a.write(notes, `{"k": 1}`+"\n")
	a.record()
	a.sync()
	b.sync()
	if err := os.Remove(filepath.Join(b.dir, notes)); err != nil {
		t.Fatal(err)
	}
	b.record()
	a.write(other, `{"o": 1}`+"\n")
	a.record()
	a.sync()
	if rb := b.sync(); rb.Result != gitstore.MergeMerged {
		t.Fatalf("b: %s, want a merge", rb.Result)
	}
	a.sync() // fast-forwards to b's merge, which deletes notes.json
	if got := a.read(notes); got != "<absent>" {
		t.Fatalf("a's %s: %q, want deleted", notes, got)
	}
	ents, err := a.eng.Log(state.LogQuery{Path: notes})
	if err != nil || len(ents) == 0 || ents[0].Action != state.ActionDelete {
		t.Fatalf("log %s = %+v, %v; want the deletion first", notes, ents, err)
	}
	k, _ := a.eng.Config().Classify(notes)
	outs, err := a.eng.Restore([]config.Kept{k}, engine.Point{})
	if err != nil {
		t.Fatalf("restore %s: %v", notes, err)
	}
	if got := a.read(notes); got != `{"k": 1}`+"\n" || len(outs) != 1 || outs[0].Revived == nil {
		t.Fatalf("restored %q, outcomes %+v", got, outs)
	}
}

// The same for a version refused by a history rule: b's later edit of an
// initiative a completed is refused in a's merge; b, taking that merge, is
// told its edit was not taken.
func TestVersionRefusedByRuleElsewhereIsLostLoudly(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	a.write(initPath, initiative("in_progress"))
	a.record()
	a.sync()
	b.sync()
	a.write(initPath, initiative("completed"))
	a.record()
	b.now = a.now.Add(time.Minute) // b's edit is later and would win
	b.write(initPath, initiative("blocked"))
	b.record()
	b.sync()
	if ra := a.sync(); len(ra.Decisions) != 1 || ra.Decisions[0].KeptLocal == "" || len(ra.Lost) != 0 {
		t.Fatalf("a: decisions = %+v, lost = %+v; want its version kept, nothing lost", ra.Decisions, ra.Lost)
	}
	rb := b.sync()
	if got := b.read(initPath); got != initiative("completed") {
		t.Fatalf("b: %q, want a's merge taken", got)
	}
	if len(rb.Lost) != 1 || rb.Lost[0].Path != initPath || !strings.Contains(rb.Lost[0].Refused, "completed") {
		t.Fatalf("b lost its edit without being told: %+v", rb.Lost)
	}
	got, err := b.eng.Show(initPath, engine.Point{Rev: rb.Lost[0].Rev})
	if err != nil || string(got) != initiative("blocked") {
		t.Fatalf("--rev %s holds %q, %v; want b's version", rb.Lost[0].Rev, got, err)
	}
	w.fsckAll()
}
