package layers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

const memoryPath = ".claude/memory/MEMORY.md"

// meanwhile sets engine.WriteStep, for the test, to run do at the step named
// (such as "check .claude/memory/MEMORY.md"), the first times times (-1:
// every time), as another writer saving the file right after strata read
// it would.
func meanwhile(t *testing.T, step string, times int, do func()) {
	t.Helper()
	engine.WriteStep = func(s string) {
		if s == step && times != 0 {
			times--
			do()
		}
	}
	t.Cleanup(func() { engine.WriteStep = nil })
}

// appendLine appends line to rel as an agent saving the file atomically does.
func (r *testRepo) appendLine(rel, line string) {
	r.t.Helper()
	name := filepath.Join(r.dir, rel)
	data, err := os.ReadFile(name)
	if err != nil {
		r.t.Fatal(err)
	}
	tmp := name + ".agent-tmp"
	if err := os.WriteFile(tmp, append(data, line+"\n"...), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		r.t.Fatal(err)
	}
}

// step writes content as the workflow state, as the agent does, and
// records it with src.
func (r *testRepo) step(content string, src state.Source) []engine.Outcome {
	r.t.Helper()
	r.write(WorkflowStatePath, []byte(content))
	outs, err := r.eng.Record([]config.Kept{{Path: WorkflowStatePath, Class: state.ClassWorkflowState, Schema: "workflow-state"}}, src)
	if err != nil {
		r.t.Fatal(err)
	}
	return outs
}

// memory add while an agent appends to MEMORY.md between the add's read and
// its write: the add reads the file again and adds its item to the agent's
// version; both lines are on disk and recorded.
func TestAddLearningKeepsAnEditMadeMeanwhile(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n\n## Learnings\n\n- first\n"))
	r.open()
	r.recordAll()
	a := New(r.eng, func(m string) { t.Log(m) })
	f, err := a.MemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	meanwhile(t, "check "+memoryPath, 1, func() { r.appendLine(memoryPath, "- agent note") })
	added, o, err := a.AddLearning(f, "Learnings", "user line")
	if err != nil || !added || o.Entry == nil {
		t.Fatalf("AddLearning = %v, %+v, %v; want added and recorded", added, o, err)
	}
	want := "# Memory\n\n## Learnings\n\n- first\n- agent note\n- user line\n"
	if got := string(r.read(memoryPath)); got != want {
		t.Errorf("MEMORY.md:\n%q\nwant\n%q", got, want)
	}
	if rec, err := r.eng.FileAt(o.Entry.Commit, memoryPath); err != nil || string(rec) != want {
		t.Errorf("recorded %q, %v", rec, err)
	}
}

// A file that changes at every try: after engine.EditTries reads, memory
// add gives up with an *engine.ChangedError; every line the other writer
// wrote is still on disk, and the item was not added.
func TestAddLearningGivesUpAndLosesNothing(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n\n## Learnings\n\n- first\n"))
	r.open()
	r.recordAll()
	a := New(r.eng, func(m string) { t.Log(m) })
	f, err := a.MemoryFile()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	meanwhile(t, "check "+memoryPath, -1, func() { n++; r.appendLine(memoryPath, "- agent note "+string(rune('0'+n))) })
	added, _, err := a.AddLearning(f, "Learnings", "user line")
	var changed *engine.ChangedError
	if added || !errors.As(err, &changed) || changed.Tries != engine.EditTries || changed.Path != memoryPath {
		t.Fatalf("AddLearning = %v, %v; want a ChangedError after %d tries", added, err, engine.EditTries)
	}
	got := string(r.read(memoryPath))
	for i := 1; i <= n; i++ {
		if !strings.Contains(got, "- agent note "+string(rune('0'+i))+"\n") {
			t.Errorf("agent note %d lost: %q", i, got)
		}
	}
	if n != engine.EditTries || strings.Contains(got, "user line") {
		t.Errorf("after %d tries: %q", n, got)
	}
}

// The write protocol's L2 line, with MEMORY.md edited between the
// protocol's read and its write: the line goes into the edited version.
func TestProtocolLineKeepsAnEditMadeMeanwhile(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n"))
	r.write(".claude/memory.jsonl", nil)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	outs := r.step(`{"type":"APEX","phase":"implement","lastUpdated":"2026-11-22T10:00:05Z"}`+"\n", state.SourceRecord)
	meanwhile(t, "check "+memoryPath, 1, func() { r.appendLine(memoryPath, "agent's paragraph") })
	if _, err := New(r.eng, func(m string) { t.Errorf("warning: %s", m) }).AfterRecord(outs); err != nil {
		t.Fatal(err)
	}
	got := string(r.read(memoryPath))
	if !strings.Contains(got, "agent's paragraph\n") || !strings.Contains(got, "- Active APEX workflow: plan completed, implementing") {
		t.Errorf("MEMORY.md: %q; want the agent's edit and the protocol line", got)
	}
}

// A workflow state written between the TTL's read and its reset is not
// stale: it is neither reset nor reported expired, and no L2 line says so.
func TestExpireLeavesAStateWrittenMeanwhile(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n"))
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","lastUpdated":"2026-11-20T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	fresh := `{"type":"APEX","phase":"implement","lastUpdated":"2026-11-22T10:00:00Z"}` + "\n"
	meanwhile(t, "check "+WorkflowStatePath, 1, func() { r.write(WorkflowStatePath, []byte(fresh)) })
	r.now = r.now.Add(time.Minute)
	x, _, err := New(r.eng, func(m string) { t.Log(m) }).Expire(state.SourceRecord)
	if err != nil || x != nil {
		t.Fatalf("Expire = %+v, %v; want nothing expired", x, err)
	}
	if got := string(r.read(WorkflowStatePath)); got != fresh {
		t.Errorf("workflow state %q, want the new one", got)
	}
	if got := string(r.read(memoryPath)); strings.Contains(got, "Expired") {
		t.Errorf("MEMORY.md says it expired: %q", got)
	}
}

// resolve's L1 rewrite, with L1 written between resolve's read and its
// write: the write is not overwritten; resolve decides again from what is
// there now (here L1, newer than L3 now, wins and L3 follows it).
func TestResolveKeepsAnL1EditMadeMeanwhile(t *testing.T) {
	r := newTestRepo(t)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	r.now = r.now.Add(5 * time.Second)
	r.write(".claude/memory.jsonl", []byte(`{"type":"entity","name":"workflow-state","entityType":"workflow_state","observations":["type: APEX","phase: implement","updated: 2026-11-22T10:00:05Z"]}`+"\n"))
	r.recordAll()
	r.now = r.now.Add(5 * time.Second)
	edited := `{"type":"APEX","phase":"review","lastUpdated":"2026-11-22T10:00:10Z"}` + "\n"
	meanwhile(t, "check "+WorkflowStatePath, 1, func() { r.write(WorkflowStatePath, []byte(edited)) })
	res, notes := r.resolve()
	if got := string(r.read(WorkflowStatePath)); got != edited {
		t.Fatalf("workflow state %q, want the edit made meanwhile %q (resolutions %+v, notes %q)", got, edited, res, notes)
	}
	if g := string(r.read(".claude/memory.jsonl")); !strings.Contains(g, `"phase: review"`) {
		t.Errorf("L3 does not follow the newer L1: %q", g)
	}
}

// A workflow state saved after the last record, found by the TTL check
// (the watcher's catch-up check, or resume, ahead of the watcher's event
// for it): Expire records it, and the write protocol runs for that record
// as for any other — its MEMORY.md line is written and recorded, and the
// outcomes returned say so. (Recorded silently, the line never came: the
// watcher's event then found the version recorded already.)
func TestExpireRunsTheProtocolForWhatItRecords(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n"))
	r.write(".claude/memory.jsonl", nil)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2026-11-22T09:59:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	r.now = r.now.Add(time.Minute)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2026-11-22T10:00:30Z"}`+"\n"))
	x, outs, err := New(r.eng, func(m string) { t.Errorf("warning: %s", m) }).Expire(state.SourceWatch)
	if err != nil || x != nil {
		t.Fatalf("Expire = %+v, %v; want nothing expired", x, err)
	}
	want := "- Active APEX workflow: plan completed, implementing auth\n"
	if got := string(r.read(memoryPath)); !strings.Contains(got, want) {
		t.Errorf("MEMORY.md: %q; want the protocol line %q", got, want)
	}
	var recorded []string
	for _, o := range outs {
		if o.Entry != nil {
			recorded = append(recorded, o.Path+" "+string(o.Entry.Source))
		}
	}
	if !slices.Equal(recorded, []string{WorkflowStatePath + " watch", memoryPath + " resolve", ".claude/memory.jsonl resolve"}) {
		t.Errorf("recorded %q; want the workflow state (watch), then MEMORY.md and the L3 graph (resolve)", recorded)
	}
}

// The cap of 20 removes the oldest protocol lines only: the user's lines
// under the heading that start like them, and a protocol line the user
// annotated with a nested note (the user's now), stay byte for byte
// (attack22-layers L-4, L-5).
func TestCapKeepsTheUsersLines(t *testing.T) {
	r := newTestRepo(t)
	var b strings.Builder
	b.WriteString("# Memory\n\n## Workflow state\n- Completed onboarding for Alice: see docs/onboarding.md\n- Active CI workflow: nightly builds run at 02:00\n")
	b.WriteString("- Active APEX workflow: a0 completed, entering b0 auth\n  - note by user: chose JWT, see ADR-7\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "- Active APEX workflow: a%d completed, entering b%d auth\n", i, i)
	}
	before := b.String()
	r.write(memoryPath, []byte(before))
	r.write(".claude/memory.jsonl", nil)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	outs := r.step(`{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2026-11-22T10:00:05Z"}`+"\n", state.SourceRecord)
	if _, err := New(r.eng, func(m string) { t.Errorf("warning: %s", m) }).AfterRecord(outs); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(before, "- Active APEX workflow: a1 completed, entering b1 auth\n", "", 1) +
		"- Active APEX workflow: plan completed, implementing auth\n"
	if got := string(r.read(memoryPath)); got != want {
		t.Errorf("MEMORY.md:\n%s\nwant\n%s", got, want)
	}
}

// A cleared workflow state ({}: the agent's, or the TTL's reset) takes its
// entity out of the L3 graph, as resolve clears it, instead of leaving the
// last workflow there for the next session; every other line stays
// (attack22-layers L-7).
func TestClearedStateLeavesL3(t *testing.T) {
	r := newTestRepo(t)
	other := `{"type":"entity","name":"user-note","entityType":"note","observations":["keep me"]}` + "\n"
	r.write(".claude/memory.jsonl", []byte(other))
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	run := func(content string) {
		t.Helper()
		outs := r.step(content, state.SourceRecord)
		if _, err := New(r.eng, func(m string) { t.Errorf("warning: %s", m) }).AfterRecord(outs); err != nil {
			t.Fatal(err)
		}
	}
	run(`{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2026-11-22T10:00:05Z"}` + "\n")
	if g := string(r.read(".claude/memory.jsonl")); !strings.Contains(g, `"phase: implement"`) {
		t.Fatalf("L3 not upserted: %q", g)
	}
	run("{}\n")
	if g := string(r.read(".claude/memory.jsonl")); g != other {
		t.Errorf("L3 after the clear:\n%q\nwant\n%q", g, other)
	}
}

// A MEMORY.md or graph file git ignores is private: strata keeps it not,
// and so the protocol writes it not — said once, with the line it would
// have written, rather than in silence (attack22-layers L-9).
func TestPrivateLayerFilesAreSaid(t *testing.T) {
	r := newTestRepo(t)
	r.write(".gitignore", []byte(".claude/memory/\n.claude/memory.jsonl\n"))
	r.write(memoryPath, []byte("# Memory\n"))
	r.write(".claude/memory.jsonl", nil)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	var warned []string
	a := New(r.eng, func(m string) { warned = append(warned, m) })
	for _, phase := range []string{"implement", "review"} {
		outs := r.step(`{"type":"APEX","phase":"`+phase+`","context":"auth","lastUpdated":"2026-11-22T10:00:05Z"}`+"\n", state.SourceRecord)
		if _, err := a.AfterRecord(outs); err != nil {
			t.Fatal(err)
		}
	}
	if len(warned) != 2 ||
		!strings.HasPrefix(warned[0], "L2 .claude/memory/MEMORY.md is private (ignored by git") ||
		!strings.HasSuffix(warned[0], "it would have said: Active APEX workflow: plan completed, implementing auth") ||
		!strings.HasPrefix(warned[1], "L3 .claude/memory.jsonl is private (ignored by git") {
		t.Errorf("warnings %q; want L2's and L3's, once each", warned)
	}
	if got := string(r.read(memoryPath)); got != "# Memory\n" {
		t.Errorf("a private MEMORY.md was written: %q", got)
	}
}

// Replay adds a line MEMORY.md lacks and leaves one it holds where it is:
// the killed run may have written it before the kill, and the agent may
// have written after it since (attack22-verify V-4).
func TestReplayLeavesALineWhereItIs(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n"))
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	base, err := r.eng.Head()
	if err != nil {
		t.Fatal(err)
	}
	r.step(`{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2026-11-22T10:00:05Z"}`+"\n", state.SourceWatch)
	there := "# Memory\n\n## Workflow state\n- Active APEX workflow: plan completed, implementing auth\n- the agent's newer note\n"
	r.write(memoryPath, []byte(there))
	if _, err := New(r.eng, func(m string) { t.Log(m) }).Replay(base, state.SourceWatch); err != nil {
		t.Fatal(err)
	}
	if got := string(r.read(memoryPath)); got != there {
		t.Errorf("MEMORY.md:\n%q\nwant it as it was:\n%q", got, there)
	}
}

// replayRepo is a repository whose workflow state went plan → implement
// → review → implement → review, recorded by the watcher (the last step's
// protocol never ran: the watcher was killed), with base the head before
// that last step and MEMORY.md holding the lines the earlier steps gave.
func replayRepo(t *testing.T) (r *testRepo, base string) {
	t.Helper()
	r = newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n"))
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	a := New(r.eng, func(m string) { t.Log(m) })
	for i, phase := range []string{"implement", "review", "implement", "review"} {
		if i == 3 {
			var err error
			if base, err = r.eng.Head(); err != nil {
				t.Fatal(err)
			}
		}
		outs := r.step(`{"type":"APEX","phase":"`+phase+`","context":"auth","lastUpdated":"2026-11-22T10:00:0`+string(rune('1'+i))+`Z"}`+"\n", state.SourceWatch)
		if i < 3 {
			if _, err := a.AfterRecord(outs); err != nil {
				t.Fatal(err)
			}
		}
	}
	return r, base
}

// In a review/fix loop the owed line, already in the section but not its
// last protocol line, moves to the end as without the kill: the section
// ends with the latest step (attack22-journal J-7).
func TestReplayMovesAnEarlierLine(t *testing.T) {
	r, base := replayRepo(t)
	// the owed line, "implement completed, reviewing", is there from the
	// loop's first round, before "review completed, implementing"
	if _, err := New(r.eng, func(m string) { t.Log(m) }).Replay(base, state.SourceWatch); err != nil {
		t.Fatal(err)
	}
	want := "# Memory\n\n## Workflow state\n- Active APEX workflow: plan completed, implementing auth\n- Active APEX workflow: review completed, implementing auth\n- Active APEX workflow: implement completed, reviewing auth\n"
	if got := string(r.read(memoryPath)); got != want {
		t.Errorf("MEMORY.md:\n%q\nwant\n%q", got, want)
	}
}

// A step git commits after the kill (HEAD holds it at the restart) is
// still the agent's: the replay asks the record's own Strata-Head, not
// HEAD now (attack22-journal J-5).
func TestReplayJudgesCheckoutsAtRecordTime(t *testing.T) {
	r, base := replayRepo(t)
	for _, args := range [][]string{{"add", WorkflowStatePath}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "wip"}} {
		if out, err := exec.Command("git", append([]string{"-C", r.dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if _, err := New(r.eng, func(m string) { t.Log(m) }).Replay(base, state.SourceWatch); err != nil {
		t.Fatal(err)
	}
	if got := string(r.read(memoryPath)); !strings.HasSuffix(got, "- Active APEX workflow: implement completed, reviewing auth\n") {
		t.Errorf("MEMORY.md lacks the owed line:\n%s", got)
	}
}

// A base too far back for one run under way replays nothing
// (attack22-journal J-10): not thousands of old steps at a start.
func TestReplayRefusesAFarBase(t *testing.T) {
	r := newTestRepo(t)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"p0","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	base, err := r.eng.Head()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= replayMax+1; i++ {
		r.step(fmt.Sprintf(`{"type":"APEX","phase":"p%d","lastUpdated":"2026-11-22T10:00:00Z"}`, i)+"\n", state.SourceWatch)
	}
	if outs, err := New(r.eng, func(m string) { t.Log(m) }).Replay(base, state.SourceWatch); !errors.Is(err, ErrReplayBase) || len(outs) > 0 {
		t.Errorf("Replay = %v, %v; want nothing, ErrReplayBase", outs, err)
	}
}

// The one door of the L2 file's writes (memoryDoor): whatever the
// configuration names as L2, the protocol and memory add write only into a
// Markdown file of text. .strata.yaml's memory: is checked when it loads
// (config.MemoryName); here the configuration is changed after it loaded,
// as a bug elsewhere could, and .envrc, Claude Code's settings and
// strata's own configuration stay as they were (attack23-hostile F1).
func TestMemoryDoorWritesOnlyMarkdown(t *testing.T) {
	for _, tc := range []struct{ path, content, want, link string }{
		// a folder linked to .claude/agents: a MEMORY.md there is a
		// subagent's definition (attack23-recheck N2)
		{"notes/MEMORY.md", "---\nname: reviewer\n---\nReview.\n", "in a folder of .claude/", ".claude/agents"},
		{".envrc", "export A=1\n", "not a file named MEMORY.md", ""},
		{".claude/settings.json", "{\n  \"permissions\": {\"allow\": [\"Bash(ls)\"]}\n}\n", "not a file named MEMORY.md", ""},
		{".strata.yaml", "version: 1\n", "not a file named MEMORY.md", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := newTestRepo(t)
			if tc.link != "" {
				if err := os.MkdirAll(filepath.Join(r.dir, tc.link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(r.dir, tc.link), filepath.Join(r.dir, filepath.Dir(tc.path))); err != nil {
					t.Fatal(err)
				}
			}
			r.write(tc.path, []byte(tc.content))
			r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","lastUpdated":"2026-11-22T10:00:00Z"}`))
			// kept by the user's own configuration, so the door itself
			// is what refuses (a file only .strata.yaml names is private)
			if out, err := exec.Command("git", "-C", r.dir, "config", "--add", "strata.keepPrivate", tc.path).CombinedOutput(); err != nil {
				t.Fatalf("git config: %v: %s", err, out)
			}
			r.open()
			r.recordAll()
			cfg := r.eng.Config()
			cfg.Memory, cfg.MemoryPinned = tc.path, true
			r.eng.Forget() // the configuration changed under the engine: paths judged again
			var warnings []string
			a := New(r.eng, func(m string) { warnings = append(warnings, m) })
			a.Graph = NoGraph{}
			outs := r.step(`{"type":"APEX","phase":"implement","context":"$(touch PWNED)","lastUpdated":"2026-11-22T10:01:00Z"}`, state.SourceRecord)
			if _, err := a.AfterRecord(outs); err != nil {
				t.Fatal(err)
			}
			if got := string(r.read(tc.path)); got != tc.content {
				t.Errorf("the protocol wrote into %s:\n%s", tc.path, got)
			}
			if !slices.ContainsFunc(warnings, func(w string) bool {
				return strings.HasPrefix(w, "L2 "+tc.path+" not written: "+tc.want)
			}) {
				t.Errorf("warnings %q, want L2 %s not written: %s", warnings, tc.path, tc.want)
			}
			f, err := a.MemoryFile()
			if err != nil {
				t.Fatal(err)
			}
			added, _, err := a.AddLearning(f, "Learnings", "a learning")
			var ps state.Problems
			if added || !errors.As(err, &ps) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("AddLearning = %v, %v; want refused: %s", added, err, tc.want)
			}
			if got := string(r.read(tc.path)); got != tc.content {
				t.Errorf("memory add wrote into %s:\n%s", tc.path, got)
			}
		})
	}
}

// memoryDoor's test of the content: text only, a missing file passes.
func TestMemoryDoorContent(t *testing.T) {
	for content, ok := range map[string]bool{"# M\n\n- x\n": true, "": true, "a\x00b": false, "\xff\xfe#\x00": false, "caf\xe9": false} {
		err := memoryDoor(nil, engine.File{Kept: config.Kept{Path: "MEMORY.md"}, Content: []byte(content), Exists: true})
		if (err == nil) != ok {
			t.Errorf("%q: %v", content, err)
		}
	}
	if err := memoryDoor(nil, engine.File{Kept: config.Kept{Path: "notes/MEMORY.md"}}); err != nil {
		t.Errorf("a missing file: %v", err)
	}
}

// A workflow state whose values hold control and format characters (JSON
// \u escapes, decoded) gives MEMORY.md lines of printable text, and the
// cap and the replay still know them as the protocol's: 24 steps keep the
// last 20 lines and the user's note, and a replay leaves the owed line
// where the killed run wrote it (attack23-verify 5).
func TestProtocolLinesOfControlValues(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n\n## Workflow state\n- the user's note\n"))
	r.write(".claude/memory.jsonl", nil)
	ctx := `auth\n\u2028x\u0085y \u001b]0;owned\u0007\u001b[2J \u009b31m \u202egnp \u2066\u200b\ufeff\u007f café`
	doc := func(i int) string {
		return fmt.Sprintf(`{"type":"APEX","phase":"p\u001b%d","context":"%s","lastUpdated":"2026-11-22T10:00:%02dZ"}`+"\n", i, ctx, i)
	}
	line := func(i int) string {
		return fmt.Sprintf(`Active APEX workflow: p\x1b%d completed, entering p\x1b%d auth x y \x1b]0;owned\a\x1b[2J \u009b31m \u202egnp \u2066\u200b\ufeff\x7f café`, i-1, i)
	}
	r.write(WorkflowStatePath, []byte(doc(0)))
	r.open()
	r.recordAll()
	a := New(r.eng, func(m string) { t.Errorf("warning: %s", m) })
	var base string
	for i := 1; i <= 25; i++ {
		if i == 25 {
			var err error
			if base, err = r.eng.Head(); err != nil {
				t.Fatal(err)
			}
		}
		outs := r.step(doc(i), state.SourceWatch)
		if i == 25 {
			break // the watcher is killed before its protocol
		}
		if _, err := a.AfterRecord(outs); err != nil {
			t.Fatal(err)
		}
	}
	want := "# Memory\n\n## Workflow state\n- the user's note\n"
	for i := 5; i <= 24; i++ {
		want += "- " + line(i) + "\n"
	}
	got := string(r.read(memoryPath))
	if got != want {
		t.Fatalf("MEMORY.md:\n%q\nwant\n%q", got, want)
	}
	for _, l := range strings.Split(got, "\n") {
		if state.TermSafe(l) != l {
			t.Errorf("MEMORY.md holds a line a terminal acts on: %q", l)
		}
	}
	// the killed run wrote its line (its write also dropped the oldest
	// line, the cap of 20), and the agent a note after it
	there := "# Memory\n\n## Workflow state\n- the user's note\n"
	for i := 6; i <= 25; i++ {
		there += "- " + line(i) + "\n"
	}
	there += "- the agent's newer note\n"
	r.write(memoryPath, []byte(there))
	if _, err := New(r.eng, func(m string) { t.Log(m) }).Replay(base, state.SourceWatch); err != nil {
		t.Fatal(err)
	}
	if got := string(r.read(memoryPath)); got != there {
		t.Errorf("the replay moved a line it owed and the file held:\n%q\nwant\n%q", got, there)
	}
}

// A workflow state whose phase is white space expires with a line that
// reads "at (no phase)" and that the cap counts; the line an older strata
// wrote for one ("at for") is counted too, and so trimmed in its turn
// (note23 "Left alone").
func TestExpiredLineWithNoPhaseIsCapped(t *testing.T) {
	r := newTestRepo(t)
	var b strings.Builder
	b.WriteString("# Memory\n\n## Workflow state\n- Expired workflow: DEBUG at for old\n")
	for i := 1; i < MaxWorkflowLines; i++ {
		fmt.Fprintf(&b, "- Active APEX workflow: a%d completed, entering b%d auth\n", i, i)
	}
	r.write(memoryPath, []byte(b.String()))
	r.write(".claude/memory.jsonl", nil)
	r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":" \n","context":"auth","lastUpdated":"2026-11-20T10:00:00Z"}`+"\n"))
	r.open()
	r.recordAll()
	x, _, err := New(r.eng, func(m string) { t.Errorf("warning: %s", m) }).Expire(state.SourceRecord)
	if err != nil || x == nil {
		t.Fatalf("Expire = %+v, %v; want the state expired", x, err)
	}
	want := strings.Replace(b.String(), "- Expired workflow: DEBUG at for old\n", "", 1) +
		"- Expired workflow: APEX at (no phase) for auth\n"
	got := string(r.read(memoryPath))
	if got != want {
		t.Errorf("MEMORY.md:\n%s\nwant\n%s", got, want)
	}
	if n := len(protocolLines([]byte(got))); n != MaxWorkflowLines {
		t.Errorf("%d protocol lines counted, want %d", n, MaxWorkflowLines)
	}
}

// memory add's TEXT is written as the protocol writes its lines
// (ItemText): white space, a tab included, becomes one space and every
// other control or format character its escape, as text, so cat MEMORY.md
// or git diff acts on nothing (attack33 L1); the same TEXT again is the
// same item, not added twice.
func TestAddLearningEscapesControls(t *testing.T) {
	r := newTestRepo(t)
	r.write(memoryPath, []byte("# Memory\n\n## Learnings\n\n- first\n"))
	r.open()
	r.recordAll()
	a := New(r.eng, func(m string) { t.Log(m) })
	texts := []string{"x\x1b]0;PWN\a", "a\tb\x7f \u009b2J \u202egnp\u0085end", "x\x1b]0;PWN\a"}
	for i, text := range texts {
		f, err := a.MemoryFile()
		if err != nil {
			t.Fatal(err)
		}
		added, _, err := a.AddLearning(f, "Learnings", text)
		if err != nil || added != (i < 2) {
			t.Fatalf("AddLearning(%q) = %v, %v; want added %v", text, added, err, i < 2)
		}
	}
	want := "# Memory\n\n## Learnings\n\n- first\n- x\\x1b]0;PWN\\a\n- a b\\x7f \\u009b2J \\u202egnp end\n"
	got := string(r.read(memoryPath))
	if got != want {
		t.Errorf("MEMORY.md:\n%q\nwant\n%q", got, want)
	}
	for _, c := range got {
		if c < 0x20 && c != '\n' || c == 0x7f || c >= 0x80 && c < 0xa0 || c == '\u202e' {
			t.Errorf("MEMORY.md holds %U: %q", c, got)
		}
	}
	if line := lineOf("%s", texts[1]); line != ItemText(texts[1]) {
		t.Errorf("the protocol's line %q and memory add's item %q differ", line, ItemText(texts[1]))
	}
}
