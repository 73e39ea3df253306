package syncer

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
)

// A MEMORY.md line still being appended (the recorded version with bytes
// added, the last no line end, written a moment ago) is left unrecorded by
// a sync, not published half-written: recorded and pushed, the other
// machine's own append joined it (attack42 F4, F6). Once the line ends,
// the next sync takes it.
func TestSyncLeavesLineInProgress(t *testing.T) {
	was := engine.UnendedWait
	engine.UnendedWait = time.Hour // "a moment ago" under any load
	t.Cleanup(func() { engine.UnendedWait = was })
	w := newWorld(t, "a", "b")
	a, b := w.ms[0], w.ms[1]
	const base = "# Memory\n\n## Learnings\n- base\n"
	a.write("MEMORY.md", base)
	a.record()
	a.sync()
	f, err := os.OpenFile(a.eng.Config().Abs("MEMORY.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("- A li"); err != nil {
		t.Fatal(err)
	}
	// (not a.sync(), which checks that every file is recorded after it)
	rep, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir})
	if err != nil || !slices.Contains(rep.Held, "MEMORY.md") || slices.Contains(rep.Recorded, "MEMORY.md") {
		t.Fatalf("sync: %v; held %v, recorded %v", err, rep.Held, rep.Recorded)
	}
	b.sync()
	if got := b.read("MEMORY.md"); got != base {
		t.Fatalf("b has %q", got)
	}
	if _, err := f.WriteString("ne 1\n"); err != nil {
		t.Fatal(err)
	}
	a.sync()
	b.sync()
	if got := b.read("MEMORY.md"); !strings.HasSuffix(got, "\n- A line 1\n") {
		t.Fatalf("b has %q", got)
	}
}
