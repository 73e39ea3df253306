package engine

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
)

// appendTo adds s at the end of path's file in one write, as an agent's
// `echo … >>` does.
func appendTo(t *testing.T, e *Engine, path, s string) {
	t.Helper()
	f, err := os.OpenFile(e.Config().Abs(path), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// waitingFor sets UnendedWait to d for the test.
func waitingFor(t *testing.T, d time.Duration) {
	t.Helper()
	was := UnendedWait
	UnendedWait = d
	t.Cleanup(func() { UnendedWait = was })
}

// unendedOverPush makes MEMORY.md recorded, a line half appended to it
// here ("- B li"), and a push adding "- A line 1" taken meanwhile.
func unendedOverPush(t *testing.T) *Engine {
	t.Helper()
	const base = "# Memory\n\n## Learnings\n- base\n"
	e := memoryEditedOverPush(t, base, base+"- B li")
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	return e
}

// A push taken while a MEMORY.md line is half appended here is merged with
// the edit once the line ends, never with the half line: merged and
// recorded then, the half line went to the other machine, whose own
// `echo … >>` joined it (attack41 F1, third form: `- - A19` on both
// machines, a push merged over the half line by the watcher).
func TestMergeOverUnendedLineWaits(t *testing.T) {
	const mem = "MEMORY.md"
	waitingFor(t, time.Hour)
	e := unendedOverPush(t)
	// the record that makes the owed merge (the watcher's, a hook's, by
	// hand) leaves it, and says so
	for range 2 {
		outs := record(t, e, mem)
		if len(outs) != 1 || outs[0].Entry != nil || len(outs[0].Problems) != 1 || !strings.Contains(outs[0].Problems[0].Message, "still being appended") {
			t.Fatalf("record while the line is half written: %+v", outs)
		}
		if got := gitShow(t, e, mem); strings.Contains(got, "- B li") {
			t.Fatalf("the half line was recorded:\n%s", got)
		}
		if w := e.UnendedMergeWait(read(t, e, mem)); w <= 0 {
			t.Fatalf("the watcher is not told to wait: %v", w)
		}
	}
	appendTo(t, e, mem, "ne 1\n")
	if w := e.UnendedMergeWait(read(t, e, mem)); w != 0 {
		t.Fatalf("waits for an ended line: %v", w)
	}
	record(t, e, mem)
	for _, got := range []string{onDisk(t, e, mem), gitShow(t, e, mem)} {
		if !strings.Contains(got, "\n- A line 1\n") || !strings.Contains(got, "\n- B line 1\n") {
			t.Fatalf("MEMORY.md:\n%s", got)
		}
	}
	if paths, _, _, err := e.PendingMerges(); err != nil || len(paths) != 0 {
		t.Fatalf("merges still owed: %v %v", paths, err)
	}
}

// A line left unended for longer than UnendedWait is merged as it is (kept
// last and unended): a file saved without a final newline is legitimate,
// and the push's lines are not left out for ever.
func TestMergeOverUnendedLineAfterWait(t *testing.T) {
	const mem = "MEMORY.md"
	waitingFor(t, 50*time.Millisecond)
	e := unendedOverPush(t)
	record(t, e, mem) // leaves it for the line
	if paths, _, unended, err := e.PendingMerges(); err != nil || len(paths) != 1 || !unended[mem] {
		t.Fatalf("owed: %v %v %v", paths, unended, err)
	}
	time.Sleep(100 * time.Millisecond)
	if w := e.UnendedMergeWait(read(t, e, mem)); w != 0 {
		t.Fatalf("waits past UnendedWait: %v", w)
	}
	record(t, e, mem)
	for _, got := range []string{onDisk(t, e, mem), gitShow(t, e, mem)} {
		if !strings.Contains(got, "\n- A line 1\n") || !strings.HasSuffix(got, "\n- B li") {
			t.Fatalf("MEMORY.md:\n%s", got)
		}
	}
}

// read reads path's kept file as a record would.
func read(t *testing.T, e *Engine, path string) File {
	t.Helper()
	f, p := e.Read(kept(t, e, path))
	if p != nil {
		t.Fatal(p)
	}
	return f
}

// A graph line still being appended when a push came is neither merged
// nor rejected while it is half written (no JSON yet): the merge waits
// for it as for a MEMORY.md line, and is made once it ends. Before, the
// half line was quarantined as an invalid version and reported as such.
func TestGraphHalfLineOverPushWaits(t *testing.T) {
	const graph = ".claude/memory.jsonl"
	waitingFor(t, time.Hour)
	const base = `{"type":"entity","name":"base","entityType":"t","observations":["o"]}` + "\n"
	e := editedOverPush(t, graph, base, base+`{"type":"entity","name":"A1","entityType":"t","observations":["o"]}`+"\n", base+`{"type":"entity","name":"B1","entityTy`)
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	outs := record(t, e, graph)
	if len(outs) != 1 || !outs[0].WaitsForLine || outs[0].Invalid() || outs[0].Rejected != nil {
		t.Fatalf("record while the line is half written: %+v", outs)
	}
	appendTo(t, e, graph, `pe":"t","observations":["o"]}`+"\n")
	record(t, e, graph)
	for _, got := range []string{onDisk(t, e, graph), gitShow(t, e, graph)} {
		if !strings.Contains(got, `"name":"A1"`) || !strings.Contains(got, `"name":"B1"`) {
			t.Fatalf("graph:\n%s", got)
		}
	}
	if out, err := exec.Command("git", "-C", e.Config().Root, "rev-parse", "-q", "--verify", e.RejectedRef()).Output(); err == nil {
		t.Fatalf("a version was rejected: %s", out)
	}
}

// A wait that started ahead of the clock (the clock set back since, a
// merge-again.json written by hand) waits no more: the merge is made.
func TestUnendedWaitAheadOfClock(t *testing.T) {
	if stillWaiting(time.Now().Add(time.Hour).UnixNano()) {
		t.Fatal("a wait started an hour ahead of the clock still waits")
	}
	if !stillWaiting(time.Now().UnixNano()) || !stillWaiting(0) {
		t.Fatal("a wait started now, or not yet, does not wait")
	}
}

// A merge over an edit that cannot keep all of it (a relation the edit
// adds to an entity the push deleted) names what it dropped, as a sync's
// merge does (attack41 L4: it went with no word).
func TestMergeOverEditNamesDropped(t *testing.T) {
	const graph = ".claude/memory.jsonl"
	const a = `{"type":"entity","name":"a","entityType":"t","observations":["o"]}` + "\n"
	const x = `{"type":"entity","name":"x","entityType":"t","observations":["o"]}` + "\n"
	e := editedOverPush(t, graph, a+x, a, a+x+`{"type":"relation","from":"a","to":"x","relationType":"knows"}`+"\n")
	if err := e.TakePush(); err != nil {
		t.Fatal(err)
	}
	e.TakeNotWritten()
	record(t, e, graph)
	nw := e.TakeNotWritten()
	if len(nw) != 1 || nw[0].Merged == "" || len(nw[0].Dropped) != 1 || !strings.Contains(nw[0].Dropped[0], "knows") {
		t.Fatalf("not written: %+v", nw)
	}
	if got := onDisk(t, e, graph); strings.Contains(got, "knows") || strings.Contains(got, `"name":"x"`) {
		t.Fatalf("graph:\n%s", got)
	}
}

// A restore while a merge waits for a line saves the file first as any
// restore does, the half line included: left unrecorded by the wait, it
// was in no ref once the restore replaced it (attack42 F1).
func TestRestoreDuringWaitSavesHalfLine(t *testing.T) {
	const mem = "MEMORY.md"
	waitingFor(t, time.Hour)
	e := unendedOverPush(t)
	record(t, e, mem) // leaves it for the line
	head := mustHead(t, e)
	outs, err := e.Restore([]config.Kept{kept(t, e, mem)}, Point{Rev: head})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Saved == nil {
		t.Fatalf("restore: %+v", outs)
	}
	saved, err := e.FileAt(outs[0].Saved.Commit, mem)
	if err != nil || !strings.HasSuffix(string(saved), "\n- B li") {
		t.Fatalf("saved %q, %v", saved, err)
	}
}

// An owed merge that cannot be made (a version it names is missing) keeps
// its own file unrecorded, with a warning, and no other: every record used
// to record nothing at all, with no word (attack42 M1).
func TestUnmakeableMergeBlocksOnlyItsFile(t *testing.T) {
	e, head := owedMemoryMerge(t)
	data, err := os.ReadFile(e.mergeAgainPath())
	if err != nil {
		t.Fatal(err)
	}
	var ms []mergeAgain
	if err := json.Unmarshal(data, &ms); err != nil || len(ms) != 1 {
		t.Fatalf("%s: %v", data, err)
	}
	ms[0].Ours = strings.Repeat("1", 40) // in no object store
	e.writeMergeAgain(ms)
	edit(t, e, "MEMORY.md", head+"- B line 1\n- B line 2\n")
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	outs := record(t, e, "MEMORY.md", ".claude/a.json")
	if len(outs) != 2 || outs[0].Entry != nil || len(outs[0].Problems) != 1 || !strings.Contains(outs[0].Problems[0].Message, "could not be made") || outs[1].Entry == nil {
		t.Fatalf("record: %+v", outs)
	}
}

// A write of strata's own (memory add, the protocol's) over a MEMORY.md
// whose last line another writer is still appending waits for the line:
// once it ends the file is no longer the version the caller read, and the
// caller reads it again. Spliced at once, strata's line went after the
// half line and the writer's rest after strata's (attack42 F5, F9).
func TestPutWaitsForLineInProgress(t *testing.T) {
	const mem = "MEMORY.md"
	waitingFor(t, time.Minute)
	e := newRepo(t)
	edit(t, e, mem, "# Memory\n\n- a\n")
	record(t, e, mem)
	appendTo(t, e, mem, "- b")
	f := read(t, e, mem)
	go func() {
		time.Sleep(200 * time.Millisecond)
		appendTo(t, e, mem, " done\n")
	}()
	_, err := e.Put(f.Kept, f.ID(), append(f.Content, "\n- x\n"...), state.SourceRecord)
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("Put over a line still being appended: %v, file:\n%s", err, onDisk(t, e, mem))
	}
}

// A write of strata's own that builds on the file (Put: memory add, the
// protocol) while a merge with a pushed version waits for a line refuses
// (ErrChanged, tried again by the caller), and the merge stays owed: saved
// first as it was, the edit took the pushed lines out of the head and the
// merge was dropped.
func TestPutDuringWaitKeepsMergeOwed(t *testing.T) {
	const mem = "MEMORY.md"
	waitingFor(t, time.Hour)
	e := unendedOverPush(t)
	record(t, e, mem) // leaves it for the line
	f := read(t, e, mem)
	if _, err := e.Put(f.Kept, f.ID(), append(f.Content, "\n- x\n"...), state.SourceRecord); !errors.Is(err, ErrChanged) {
		t.Fatalf("Put during the wait: %v, file:\n%s", err, onDisk(t, e, mem))
	}
	if got := gitShow(t, e, mem); !strings.Contains(got, "- A line 1\n") {
		t.Fatalf("the pushed line is gone from the head:\n%s", got)
	}
	appendTo(t, e, mem, "ne 1\n")
	record(t, e, mem)
	for _, got := range []string{onDisk(t, e, mem), gitShow(t, e, mem)} {
		if !strings.Contains(got, "\n- A line 1\n") || !strings.Contains(got, "\n- B line 1\n") {
			t.Fatalf("MEMORY.md:\n%s", got)
		}
	}
}
