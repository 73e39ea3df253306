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

// A remote version over this machine's max_size is judged by its object
// header, not taken and reported; every other path still merges (before,
// one oversize blob aborted every sync, for good).
func TestOversizeRemoteVersionStaysOutRestMerges(t *testing.T) {
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

	big := `{"entries": [], "note": "` + strings.Repeat("x", 4096) + `"}` + "\n"
	a.write(".claude/delegation-log.json", big)
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync()

	rep, err := Sync(t.Context(), b.eng, Options{Cwd: b.dir})
	if err != nil {
		t.Fatalf("b: sync: %v (an oversize version must not abort the sync)", err)
	}
	if got := b.read(wsPath); got != ws("plan") {
		t.Errorf("b: workflow state %q, want a's version merged", got)
	}
	if got := b.read(".claude/delegation-log.json"); got != "<absent>" {
		t.Errorf("b: oversize file written: %d bytes", len(got))
	}
	found := false
	for _, d := range rep.Decisions {
		if d.Path == ".claude/delegation-log.json" && strings.Contains(d.KeptLocal, "over max_size 2048") {
			found = true
		}
	}
	if !found {
		t.Errorf("decisions = %+v, want the oversize version reported as not taken", rep.Decisions)
	}
	w.fsckAll()
}
