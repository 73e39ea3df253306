package engine

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/strata-dev/strata/config"
)

// TestRestoreRefusesWhatItCannotSave: a file on disk that a restore would
// replace or remove, but that cannot be read to be saved first (larger than
// max_size, unreadable), stops Restore and RestoreAll before anything is
// written, with a *PathError naming it and why; the file keeps its bytes.
func TestRestoreRefusesWhatItCannotSave(t *testing.T) {
	for _, tc := range []struct {
		name, precious, why string
		spoil               func(t *testing.T, name string)
	}{
		{"too large", `{"v": "precious, never recorded, over max_size"}`, "larger than max_size 40; not restored (it could not be saved first)", func(*testing.T, string) {}},
		{"unreadable", `{"v": "precious"}`, "cannot read: permission denied; not restored (it could not be saved first)", func(t *testing.T, name string) {
			if os.Geteuid() == 0 {
				t.Skip("root reads a file of mode 000")
			}
			if err := os.Chmod(name, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(name, 0o644) })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			precious := tc.precious
			e := withConfig(t, newRepo(t), "max_size: 40\n")
			edit(t, e, ".claude/a.json", `{"v": 1}`)
			edit(t, e, ".claude/b.json", `{"v": 1}`)
			record(t, e, ".claude/a.json", ".claude/b.json")
			first := mustHead(t, e)
			edit(t, e, ".claude/c.json", `{"v": 1}`) // absent at first: RestoreAll removes it
			record(t, e, ".claude/c.json")

			for _, target := range []string{".claude/a.json", ".claude/c.json"} {
				edit(t, e, ".claude/b.json", `{"v": 2}`) // would be saved, then written
				name := e.Config().Abs(target)
				edit(t, e, target, precious)
				tc.spoil(t, name)
				head := mustHead(t, e)
				restores := map[string]func() error{
					"RestoreAll":     func() error { _, err := e.RestoreAll(Point{Rev: first}); return err },
					"PlanRestoreAll": func() error { _, err := e.PlanRestoreAll(Point{Rev: first}); return err },
				}
				if target == ".claude/a.json" {
					ks := []config.Kept{kept(t, e, ".claude/b.json"), kept(t, e, target)}
					restores["Restore"] = func() error { _, err := e.Restore(ks, Point{Rev: first}); return err }
					restores["PlanRestore"] = func() error { _, err := e.PlanRestore(ks, Point{Rev: first}); return err }
				}
				for what, restore := range restores {
					err := restore()
					var pe *PathError
					if !errors.As(err, &pe) || !pe.IO || pe.Path != target || !strings.HasSuffix(pe.Reason, tc.why) {
						t.Fatalf("%s over %s: %v, want the refusal %q", what, target, err, tc.why)
					}
					os.Chmod(name, 0o644)
					if got := onDisk(t, e, target); got != precious {
						t.Fatalf("%s over %s: the unsaved file became %q", what, target, got)
					}
					if got := onDisk(t, e, ".claude/b.json"); got != `{"v": 2}` {
						t.Fatalf("%s over %s: b.json written (%q) by a refused restore", what, target, got)
					}
					if h := mustHead(t, e); h != head {
						t.Fatalf("%s over %s: a refused restore moved the state ref", what, target)
					}
					tc.spoil(t, name)
				}
				os.Chmod(name, 0o644)
				edit(t, e, target, `{"v": 1}`)
				record(t, e, target, ".claude/b.json")
			}
		})
	}
}
