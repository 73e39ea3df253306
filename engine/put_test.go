package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
)

// onStep sets WriteStep, for the test, to run do once at the step named
// (such as "check .claude/a.json"), as another writer saving the file at
// that moment would.
func onStep(t *testing.T, step string, do func()) {
	t.Helper()
	done := false
	WriteStep = func(s string) {
		if s == step && !done {
			done = true
			do()
		}
	}
	t.Cleanup(func() { WriteStep = nil })
}

// saveAs writes a file as an editor saving atomically does: a new file
// renamed over the old one.
func saveAs(t *testing.T, e *Engine, path, content string) {
	t.Helper()
	name := e.Config().Abs(path)
	tmp := filepath.Join(filepath.Dir(name), ".editor-tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}

// Put writes over the version its caller read, and only over it: a file
// written by someone else after that read — before Put looks, or after it
// looked and right before the rename, in place or by a rename, or created
// where the caller found none — keeps that write; Put writes and records
// nothing and says so with an error wrapping ErrChanged.
func TestPutWritesOnlyOverTheVersionRead(t *testing.T) {
	const path = ".claude/a.json"
	v1, ours, theirs := `{"v": 1}`+"\n", `{"v": "ours"}`+"\n", `{"v": "theirs, longer"}`+"\n"
	cases := []struct {
		name   string
		exists bool   // the file the caller read exists (as v1)
		step   string // when the other writer writes
		write  func(t *testing.T, e *Engine)
	}{
		{"edited before Put looks", true, "check", func(t *testing.T, e *Engine) { edit(t, e, path, theirs) }},
		{"edited in place before the rename", true, "added", func(t *testing.T, e *Engine) { edit(t, e, path, theirs) }},
		{"saved by a rename before the rename", true, "added", func(t *testing.T, e *Engine) { saveAs(t, e, path, theirs) }},
		{"removed before the rename", true, "added", func(t *testing.T, e *Engine) { os.Remove(e.Config().Abs(path)) }},
		{"created before Put looks", false, "check", func(t *testing.T, e *Engine) { edit(t, e, path, theirs) }},
		{"created before the new file is linked", false, "added", func(t *testing.T, e *Engine) { edit(t, e, path, theirs) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newRepo(t)
			k := kept(t, e, path)
			base := ""
			if tc.exists {
				edit(t, e, path, v1)
				record(t, e, path)
				base = gitstore.BlobHash([]byte(v1))
			}
			head, _ := e.Head()
			var want string
			onStep(t, tc.step+" "+path, func() {
				tc.write(t, e)
				want, _ = readOrAbsent(e.Config().Abs(path))
			})
			o, err := e.Put(k, base, []byte(ours), state.SourceRecord)
			var changed *ChangedError
			if !errors.Is(err, ErrChanged) || !errors.As(err, &changed) || changed.Path != path || o.Written {
				t.Fatalf("Put = %+v, %v; want nothing written and an error wrapping ErrChanged", o, err)
			}
			if got, _ := readOrAbsent(e.Config().Abs(path)); got != want {
				t.Errorf("on disk %q, want the other writer's %q", got, want)
			}
			if h, _ := e.Head(); h != head {
				t.Errorf("the state ref moved: %s", h)
			}
			if ents, _ := os.ReadDir(filepath.Dir(e.Config().Abs(path))); len(ents) > 1 {
				for _, d := range ents {
					if strings.HasPrefix(d.Name(), ".strata-tmp-") {
						t.Errorf("left behind %s", d.Name())
					}
				}
			}
		})
	}
	// Put based on the version on disk writes and records.
	e := newRepo(t)
	k := kept(t, e, path)
	edit(t, e, path, v1)
	o, err := e.Put(k, gitstore.BlobHash([]byte(v1)), []byte(ours), state.SourceRecord)
	if err != nil || !o.Written || o.Entry == nil {
		t.Fatalf("Put over the version read = %+v, %v; want written and recorded", o, err)
	}
	if got := onDisk(t, e, path); got != ours {
		t.Errorf("on disk %q", got)
	}
}

// Put records the version it wrote, not what is on disk by the time it
// records: an agent's editor that replaces the file right after Put's
// rename (without checking, as editors do) does not take the place of the
// written version in history; its own is recorded next.
func TestPutRecordsTheVersionItWrote(t *testing.T) {
	e := newRepo(t)
	const path = ".claude/a.json"
	k := kept(t, e, path)
	ours, theirs := `{"v": "ours"}`+"\n", `{"v": "theirs"}`+"\n"
	onStep(t, "written "+path, func() { saveAs(t, e, path, theirs) })
	o, err := e.Put(k, "", []byte(ours), state.SourceRecord)
	if err != nil || !o.Written || o.Entry == nil {
		t.Fatalf("Put = %+v, %v; want written and recorded", o, err)
	}
	if rec, err := e.FileAt(o.Entry.Commit, path); err != nil || string(rec) != ours {
		t.Errorf("recorded %q, %v; want the version Put wrote", rec, err)
	}
	outs := record(t, e, path)
	if outs[0].Entry == nil {
		t.Fatal("the other writer's version is not recorded next")
	}
	if rec, _ := e.FileAt(outs[0].Entry.Commit, path); string(rec) != theirs {
		t.Errorf("recorded next %q", rec)
	}
}

func readOrAbsent(name string) (string, bool) {
	data, err := os.ReadFile(name)
	return string(data), err == nil
}

// Retry runs the edit again while Put finds the file changed, and gives up
// after EditTries with a *ChangedError naming the file and the tries.
func TestRetryGivesUpAfterEditTries(t *testing.T) {
	runs := 0
	err := Retry(func() error { runs++; return &ChangedError{Path: "a"} })
	var changed *ChangedError
	if !errors.As(err, &changed) || changed.Tries != EditTries || runs != EditTries || !errors.Is(err, ErrChanged) {
		t.Fatalf("Retry = %v after %d runs; want a ChangedError after %d", err, runs, EditTries)
	}
	runs = 0
	if err := Retry(func() error {
		if runs++; runs < 3 {
			return &ChangedError{Path: "a"}
		}
		return nil
	}); err != nil || runs != 3 {
		t.Fatalf("Retry = %v after %d runs; want nil after 3", err, runs)
	}
}

// decideRepo is a repository with feature auth's Phase Outcome holding the
// pending decisions D-001 and D-002, recorded.
func decideRepo(t *testing.T) *Engine {
	e := newRepo(t)
	edit(t, e, "PhaseOutcomes/auth/001-plan.yaml", `phase: plan
feature: auth
produced: []
findings: []
pending_decisions:
  - id: D-001
    type: design
    question: rotate refresh tokens on every use?
    options: [rotate, keep]
    recommended: rotate
    blocking: true
  - id: D-002
    type: design
    question: encrypt them at rest?
    options: ["yes", "no"]
    recommended: "yes"
    blocking: false
`)
	record(t, e, "PhaseOutcomes/auth/001-plan.yaml")
	return e
}

func resolution(resolves, choice, by string) string {
	return string(phase.Resolution{Resolves: resolves, Outcome: "001-plan.yaml", Choice: choice, By: by, At: "2026-11-22T10:00:00Z"}.YAML())
}

// Two decides of one decision: the one that finds, at its write, the other's
// resolution created meanwhile at the number it chose writes nothing and
// is refused naming that resolution (a decision is resolved once), as if it
// had run after it.
func TestDecideLosesToAResolutionWrittenMeanwhile(t *testing.T) {
	for _, step := range []string{"check", "added"} {
		t.Run(step, func(t *testing.T) {
			e := decideRepo(t)
			const theirs = "PhaseOutcomes/auth/002-resolution-D-001.yaml"
			other := resolution("D-001", "keep", "B")
			onStep(t, step+" "+theirs, func() { edit(t, e, theirs, other) })
			res, err := e.Decide(Decision{Feature: "auth", ID: "D-001", Choice: "rotate", By: "A"})
			var ps state.Problems
			if !errors.As(err, &ps) || !strings.Contains(ps.Error(), `already resolved here (choice "keep")`) || !strings.HasPrefix(ps.Error(), theirs+":") {
				t.Fatalf("Decide = %+v, %v; want refused naming %s", res, err, theirs)
			}
			if got := onDisk(t, e, theirs); got != other {
				t.Errorf("%s overwritten: %q", theirs, got)
			}
			if ents, _ := os.ReadDir(e.Config().Abs("PhaseOutcomes/auth")); len(ents) != 2 {
				t.Errorf("files in the folder: %v; want the outcome and the other's resolution", ents)
			}
		})
	}
}

// A decide that finds a file created meanwhile at the name it chose, one
// that resolves nothing (an agent's half-written file, say), reads the
// folder again and takes the next free number.
func TestDecideTakesTheNextNumberWhenItsOwnIsTaken(t *testing.T) {
	e := decideRepo(t)
	const taken = "PhaseOutcomes/auth/002-resolution-D-001.yaml"
	const partial = "resolves: D-001\n"
	onStep(t, "added "+taken, func() { edit(t, e, taken, partial) })
	res, err := e.Decide(Decision{Feature: "auth", ID: "D-001", Choice: "rotate", By: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != "PhaseOutcomes/auth/003-resolution-D-001.yaml" || res.Entry == nil {
		t.Fatalf("Decide = %+v; want 003, recorded", res)
	}
	if got := onDisk(t, e, taken); got != partial {
		t.Errorf("the file created meanwhile changed: %q", got)
	}
	if got := onDisk(t, e, res.Path); !strings.Contains(got, `choice: "rotate"`) {
		t.Errorf("%s: %q", res.Path, got)
	}
}
