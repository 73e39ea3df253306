package syncer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
)

// A version b's rules refuse (here: over b's max_size) stays out of b's
// merge, and b pushes that merge. a, taking it, loses its own version: the
// sync says so, status says so until the path is recorded again, and the
// version comes back from the commit named. Before, a's file was deleted
// with nothing said, exit 0.
func TestVersionRefusedElsewhereIsLostLoudly(t *testing.T) {
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	if err := os.WriteFile(filepath.Join(b.dir, config.FileName), []byte("max_size: 2KB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	b.eng = eng
	eng.Now = func() time.Time { return b.now }
	const big = ".claude/delegation-log.json"
	content := `{"entries": [], "note": "` + strings.Repeat("x", 4096) + `"}` + "\n"
	a.write(big, content)
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync()
	b.sync() // keeps its own (no such file), pushes the merge

	ra := a.sync()
	if len(ra.Lost) != 1 || ra.Lost[0].Path != big || !strings.Contains(ra.Lost[0].Refused, "over max_size 2048") {
		t.Fatalf("a: %s, lost = %+v; want %s named, with b's reason", ra.Result, ra.Lost, big)
	}
	got, err := a.eng.Show(big, engine.Point{Rev: ra.Lost[0].Rev})
	if err != nil || string(got) != content {
		t.Fatalf("--rev %s holds %d bytes, %v; want a's version", ra.Lost[0].Rev, len(got), err)
	}
	ls, err := Losses(a.eng)
	if err != nil || len(ls) != 1 || ls[0].Path != big || ls[0].Refused == "" {
		t.Fatalf("status losses = %+v, %v", ls, err)
	}
	if ra := a.sync(); len(ra.Lost) != 0 {
		t.Errorf("the next sync names it again: %+v", ra.Lost)
	}
	if got := b.sync(); len(got.Lost) != 0 {
		t.Errorf("b, which refused it, is told it lost it: %+v", got.Lost)
	}
	w.fsckAll()
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
