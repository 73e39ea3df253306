package engine

import (
	"errors"
	"github.com/strata-dev/strata/state"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
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

// TestRestoreLeavesAFileEditedMeanwhile: a file edited after the restore
// saved it — before its new version is written to a temp file ("saved"),
// or after, right before the rename ("added") — is not overwritten, nor a
// file to remove removed: the edit stays on disk, is returned Late, and is
// not recorded as the restore. The other files are restored.
func TestRestoreLeavesAFileEditedMeanwhile(t *testing.T) {
	for _, step := range []string{"saved", "added"} {
		for _, all := range []bool{false, true} {
			name := step + "/Restore"
			if all {
				name = step + "/RestoreAll"
			}
			t.Run(name, func(t *testing.T) {
				e := newRepo(t)
				edit(t, e, ".claude/a.json", `{"v": 1}`)
				edit(t, e, ".claude/b.json", `{"v": 1}`)
				record(t, e, ".claude/a.json", ".claude/b.json")
				first := mustHead(t, e)
				edit(t, e, ".claude/a.json", `{"v": 2}`)
				edit(t, e, ".claude/b.json", `{"v": 2}`)
				edit(t, e, ".claude/c.json", `{"v": 2}`) // absent at first: RestoreAll removes it
				record(t, e, ".claude/a.json", ".claude/b.json", ".claude/c.json")
				edit(t, e, ".claude/b.json", `{"v": "unrecorded"}`) // saved, then restored

				const meanwhile = `{"v": "edited during the restore"}`
				RestoreStep = func(s string) {
					if s == step {
						edit(t, e, ".claude/a.json", meanwhile)
						edit(t, e, ".claude/c.json", meanwhile)
					}
				}
				t.Cleanup(func() { RestoreStep = nil })
				var outs []Outcome
				var err error
				if all {
					outs, err = e.RestoreAll(Point{Rev: first})
				} else {
					outs, err = e.Restore([]config.Kept{kept(t, e, ".claude/a.json"), kept(t, e, ".claude/b.json")}, Point{Rev: first})
				}
				RestoreStep = nil
				if err != nil {
					t.Fatal(err)
				}
				if got := onDisk(t, e, ".claude/a.json"); got != meanwhile {
					t.Errorf("a.json, edited during the restore, is %q", got)
				}
				if got := onDisk(t, e, ".claude/c.json"); got != meanwhile {
					t.Errorf("c.json, edited during the restore, is %q", got)
				}
				if got := onDisk(t, e, ".claude/b.json"); got != `{"v": 1}` {
					t.Errorf("b.json not restored: %q", got)
				}
				wantLate := map[string]bool{".claude/a.json": true, ".claude/c.json": all}
				for _, o := range outs {
					if o.Late != wantLate[o.Path] {
						t.Errorf("%s: Late = %v, want %v (%+v)", o.Path, o.Late, wantLate[o.Path], o)
					}
					if o.Late && (o.Written || o.Entry != nil || !strings.Contains(o.Problems.Error(), "edited on disk during the restore")) {
						t.Errorf("%s: late outcome %+v", o.Path, o)
					}
					if o.Path == ".claude/b.json" && (!o.Written || o.Saved == nil || o.Entry == nil) {
						t.Errorf("b.json: outcome %+v, want saved, written and recorded", o)
					}
				}
				// the restore did not record the edit; the next record does
				files, err := e.store.Files(mustHead(t, e))
				if err != nil {
					t.Fatal(err)
				}
				if files[".claude/a.json"] != gitstore.BlobHash([]byte(`{"v": 2}`)) {
					t.Errorf("the restore recorded a.json's edit made meanwhile")
				}
				if outs := record(t, e, ".claude/a.json"); outs[0].Entry == nil {
					t.Errorf("the edit made during the restore was not recorded next: %+v", outs[0])
				}
			})
		}
	}
}

// restore --all removing a file absent at the point keeps an agent's save
// that lands after its check: the file is moved aside before it is
// compared, and a save is moved back (before, the removal removed whatever
// was at the name).
func TestRestoreAllKeepsASaveAtItsRemoval(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	record(t, e, ".claude/a.json")
	first := mustHead(t, e)
	edit(t, e, ".claude/b.json", `{"b": 1}`)
	record(t, e, ".claude/b.json")

	const saved = `{"b": "saved during the restore"}`
	agentSavesAtCheck(t, e.Config().Abs(".claude/b.json"), saved)
	outs, err := e.RestoreAll(Point{Rev: first})
	atomicfile.ReplaceStep = nil
	if err != nil {
		t.Fatal(err)
	}
	if got := onDisk(t, e, ".claude/b.json"); got != saved {
		t.Fatalf("b.json, saved during the restore, is %q", got)
	}
	late := false
	for _, o := range outs {
		late = late || (o.Path == ".claude/b.json" && o.Late)
	}
	if !late {
		t.Fatalf("outcomes %+v, want b.json late", outs)
	}
}

// An agent's save by temp file and rename landing after the restore's last
// check of a file, right before its new version takes the name
// (atomicfile.ReplaceStep "checked"), is not overwritten: the new version
// is swapped in and straight back out, the agent's bytes stay at the name,
// the file is reported edited during the restore, and the next record
// records the save. Before, the rename replaced it and it was stored
// nowhere.
func TestRestoreSwapsBackASaveAtItsRename(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("files are swapped (RENAME_EXCHANGE) on Linux only")
	}
	for _, all := range []bool{false, true} {
		t.Run("all="+strconv.FormatBool(all), func(t *testing.T) {
			e := newRepo(t)
			first := twoVersions(t, e)

			const saved = `{"v": "saved by rename during the restore"}`
			agentSavesAtCheck(t, e.Config().Abs(".claude/a.json"), saved)
			var outs []Outcome
			var err error
			if all {
				outs, err = e.RestoreAll(Point{Rev: first})
			} else {
				outs, err = e.Restore([]config.Kept{kept(t, e, ".claude/a.json")}, Point{Rev: first})
			}
			atomicfile.ReplaceStep = nil
			if err != nil {
				t.Fatal(err)
			}
			if got := onDisk(t, e, ".claude/a.json"); got != saved {
				t.Fatalf("a.json, saved during the restore, is %q", got)
			}
			if len(outs) != 1 || !outs[0].Late || outs[0].Written || !strings.Contains(outs[0].Problems.Error(), "edited on disk during the restore") {
				t.Fatalf("outcomes %+v, want a.json late", outs)
			}
			if outs := record(t, e, ".claude/a.json"); outs[0].Entry == nil {
				t.Errorf("the save made during the restore was not recorded next: %+v", outs[0])
			}
		})
	}
}

// A temp file the restore made, replaced by another process's file right
// before it would take the kept file's name (atomicfile.ReplaceStep
// "checked"), is never put in place, and the restore says what happened:
// nothing was edited, so nothing is "recorded next" (it said "edited on
// disk during the restore (recorded next)": attack36f, left by session 36).
// The restore's commit records the restored version, so the write stays
// owed in the journal, and the next record makes it.
func TestRestoreTempFileSwappedSaysSo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the temp file's identity is checked through its descriptor on Linux")
	}
	e := newRepo(t)
	first := twoVersions(t, e)
	name := e.Config().Abs(".claude/a.json")
	atomicfile.ReplaceStep = func(step, at string) {
		if step != "checked" || at != name {
			return
		}
		temps, _ := filepath.Glob(filepath.Join(filepath.Dir(name), atomicfile.Prefix+"*"))
		for _, tmp := range temps {
			if err := os.WriteFile(tmp+".other", []byte(`{"v": "another process's"}`), 0o644); err != nil {
				t.Error(err)
			}
			if err := os.Rename(tmp+".other", tmp); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { atomicfile.ReplaceStep = nil })
	outs, err := e.Restore([]config.Kept{kept(t, e, ".claude/a.json")}, Point{Rev: first})
	atomicfile.ReplaceStep = nil
	if err != nil {
		t.Fatal(err)
	}
	if got := onDisk(t, e, ".claude/a.json"); got != `{"v": 2}` {
		t.Fatalf("a.json is %q, want it as it was", got)
	}
	if len(outs) != 1 || !outs[0].Late || outs[0].Written || !strings.Contains(outs[0].Problems.Error(), "another process changed the temp file") {
		t.Fatalf("outcomes %+v, want a.json not restored, the temp file named", outs)
	}
	if owed, err := e.PendingWrites(); err != nil || len(owed) != 1 {
		t.Fatalf("owed writes %v (%v), want a.json", owed, err)
	}
	record(t, e, ".claude/a.json")
	if got := onDisk(t, e, ".claude/a.json"); got != `{"v": 1}` {
		t.Fatalf("a.json is %q after the next record, want the restored version", got)
	}
	if files, err := e.store.Files(mustHead(t, e)); err != nil || files[".claude/a.json"] != gitstore.BlobHash([]byte(`{"v": 1}`)) {
		t.Fatalf("the state ref holds %v (%v), want the restored a.json", files, err)
	}
}

// agentSavesAtCheck makes an agent save data at name, by temp file and
// rename, at the moment a restore has checked name and is about to replace
// or remove it (atomicfile.ReplaceStep "checked"), until the test ends.
func agentSavesAtCheck(t *testing.T, name, data string) {
	atomicfile.ReplaceStep = func(step, at string) {
		if step != "checked" || at != name {
			return
		}
		if err := os.WriteFile(name+".agent", []byte(data), 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(name+".agent", name); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { atomicfile.ReplaceStep = nil })
}

// A MEMORY.md a killed restore owes, edited by the agent meanwhile, is
// merged with the restored version by the command that completes the
// journal; killed itself right after it removed the journal, before that
// merge, it leaves the merge owed (OweMerges), and the next record makes
// it: the edit was recorded over the restored version as it was, the line
// the restore removed back, with no word (attack38d H1; a sync's journal
// the same, the other machine's lines gone).
func TestKilledCompletionKeepsMergeOwed(t *testing.T) {
	e := newRepo(t)
	const mem = "MEMORY.md"
	edit(t, e, mem, "# Memory\n\n## Learnings\n- keep\n")
	record(t, e, mem)
	first := mustHead(t, e)
	edit(t, e, mem, "# Memory\n\n## Learnings\n- keep\n- removed by the restore\n")
	record(t, e, mem)
	RestoreStep = func(s string) {
		if s == "moved" {
			panic("killed after its commit")
		}
	}
	t.Cleanup(func() { RestoreStep = nil })
	func() {
		defer func() { recover() }()
		e.Restore([]config.Kept{kept(t, e, mem)}, Point{Rev: first})
	}()
	RestoreStep = nil
	if owed, err := e.PendingWrites(); err != nil || len(owed) != 1 {
		t.Fatalf("owed %v (%v), want MEMORY.md", owed, err)
	}
	edit(t, e, mem, "# Memory\n\n## Learnings\n- keep\n- removed by the restore\n- agent line\n")
	// the command completing the journal, killed once the journal is gone
	if _, _, err := e.RecoverWrites(); err != nil {
		t.Fatal(err)
	}
	record(t, e, mem)
	if got, want := onDisk(t, e, mem), "# Memory\n\n## Learnings\n- keep\n- agent line\n"; got != want {
		t.Fatalf("MEMORY.md is %q, want the restore and the agent's line both kept: %q", got, want)
	}

	// the same, the merge's own Put killed between its record of the edit
	// and that of the merge: the owed merge names the edit, and a ref at
	// the edit still owes it
	edit(t, e, mem, "# Memory\n\n## Learnings\n- keep\n- agent line\n- removed again\n")
	record(t, e, mem)
	RestoreStep = func(s string) {
		if s == "moved" {
			panic("killed after its commit")
		}
	}
	func() {
		defer func() { recover() }()
		e.Restore([]config.Kept{kept(t, e, mem)}, Point{Rev: mustHead(t, e) + "~1"})
	}()
	RestoreStep = nil
	const edited = "# Memory\n\n## Learnings\n- keep\n- agent line\n- removed again\n- second agent line\n"
	edit(t, e, mem, edited)
	if _, _, err := e.RecoverWrites(); err != nil {
		t.Fatal(err)
	}
	id := gitstore.BlobHash([]byte(edited))
	e.changeMergeAgain(func(ms []mergeAgain) []mergeAgain {
		for i := range ms {
			ms[i].Edit = id
		}
		return ms
	})
	k := kept(t, e, mem)
	if _, err := e.store.Record(state.Change{Path: mem, Content: []byte(edited), Class: k.Class, Schema: k.Schema, Source: state.SourceRecord, Time: e.Now()}); err != nil {
		t.Fatal(err)
	}
	record(t, e, mem)
	if got, want := onDisk(t, e, mem), "# Memory\n\n## Learnings\n- keep\n- agent line\n- second agent line\n"; got != want {
		t.Fatalf("MEMORY.md is %q after a kill between the merge's two records, want %q", got, want)
	}
}
