package daemon

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

// appendTo adds s at the end of path's file in one write.
func appendTo(t *testing.T, eng *engine.Engine, path, s string) {
	t.Helper()
	f, err := os.OpenFile(eng.Config().Abs(path), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// memoryLog is MEMORY.md's recorded versions, newest first.
func memoryLog(t *testing.T, eng *engine.Engine) []state.Entry {
	t.Helper()
	ents, err := eng.Log(state.LogQuery{Path: "MEMORY.md"})
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// startHolding is start with holdFor set to d while the watcher runs.
func startHolding(t *testing.T, eng *engine.Engine, d time.Duration) {
	t.Helper()
	was := holdFor
	holdFor = d
	t.Cleanup(func() { holdFor = was }) // after the watcher's own cleanup
	start(t, eng, nil)
}

// A line appended to MEMORY.md in two writes, the pause between them
// longer than the debounce, is recorded once complete, never as its first
// half: recorded, a sync wrote the half line on the other machine, whose
// own append joined it (attack41 F1).
func TestHalfAppendedLineWaited(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, "MEMORY.md", "# Memory\n\n- a\n")
	startHolding(t, eng, time.Minute)
	if n := len(memoryLog(t, eng)); n != 1 {
		t.Fatalf("catch-up: %d versions", n)
	}
	appendTo(t, eng, "MEMORY.md", "- b")
	time.Sleep(300 * time.Millisecond) // many debounce windows
	appendTo(t, eng, "MEMORY.md", " done\n")
	waitFor(t, "the completed line to be recorded", func() bool { return len(memoryLog(t, eng)) >= 2 })
	ents := memoryLog(t, eng)
	if len(ents) != 2 {
		t.Fatalf("%d versions recorded, want the first and the completed one", len(ents))
	}
	data, err := eng.FileAt(ents[0].Commit, "MEMORY.md")
	if err != nil || !strings.HasSuffix(string(data), "- b done\n") {
		t.Fatalf("recorded %q, %v", data, err)
	}
}

// A file left without its final newline is recorded once held for
// holdFor: a file saved that way is legitimate.
func TestUnendedLineRecordedAfterHold(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, "MEMORY.md", "# Memory\n\n- a\n")
	startHolding(t, eng, 100*time.Millisecond)
	appendTo(t, eng, "MEMORY.md", "- b")
	waitFor(t, "the unended line to be recorded", func() bool { return len(memoryLog(t, eng)) == 2 })
	data, err := eng.FileAt(memoryLog(t, eng)[0].Commit, "MEMORY.md")
	if err != nil || !strings.HasSuffix(string(data), "\n- b") {
		t.Fatalf("recorded %q, %v", data, err)
	}
}

// A held file is recorded as it is when the watcher stops, as every
// pending change is.
func TestHeldLineRecordedAtStop(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, "MEMORY.md", "# Memory\n\n- a\n")
	was := holdFor
	holdFor = time.Minute
	defer func() { holdFor = was }()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, eng, Options{Debounce: 20 * time.Millisecond, Rescan: time.Hour, Ready: func() { close(ready) }})
	}()
	<-ready
	appendTo(t, eng, "MEMORY.md", "- b")
	time.Sleep(300 * time.Millisecond)
	if n := len(memoryLog(t, eng)); n != 1 {
		t.Fatalf("recorded while held: %d versions", n)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if n := len(memoryLog(t, eng)); n != 2 {
		t.Fatalf("%d versions after the stop, want the held one recorded", n)
	}
}

// halfLineOverPush starts the watcher, holding a line still being
// appended for hold, on MEMORY.md recorded as base, merges waiting wait for
// a line; then half a line ("- B li") is appended here and a push adding
// "- A line 1" lands in the repository.
func halfLineOverPush(t *testing.T, base string, hold, wait time.Duration) *engine.Engine {
	t.Helper()
	eng := newRepo(t)
	write(t, eng, "MEMORY.md", base)
	was := engine.UnendedWait
	engine.UnendedWait = wait
	t.Cleanup(func() { engine.UnendedWait = was })
	startHolding(t, eng, hold)
	waitFor(t, "the catch-up's record", func() bool { return len(memoryLog(t, eng)) == 1 })
	appendTo(t, eng, "MEMORY.md", "- B li")
	pushFiles(t, eng, [2]string{"MEMORY.md", base + "- A line 1\n"})
	return eng
}

// headMemoryHas reports whether the state ref's MEMORY.md holds each of
// lines.
func headMemoryHas(t *testing.T, eng *engine.Engine, lines ...string) bool {
	t.Helper()
	data, err := eng.FileAt(memoryLog(t, eng)[0].Commit, "MEMORY.md")
	if err != nil {
		return false
	}
	for _, l := range lines {
		if !strings.Contains(string(data), l) {
			return false
		}
	}
	return true
}

// A push taken while a MEMORY.md line is half appended here is merged with
// the line once it ends (engine.UnendedWait), never with the half line:
// merged and recorded then, a sync took the half line to the other
// machine, whose own `echo … >>` joined it (attack41 F1, a push merged over
// the half line by the watcher: `- - A19` on both machines).
func TestHalfLineOverPushMergedOnceEnded(t *testing.T) {
	// the watcher's own hold outlasts the test: the push is taken by its
	// look (each second), which merges the file at once
	eng := halfLineOverPush(t, "# Memory\n\n- a\n", time.Hour, time.Hour)
	time.Sleep(1500 * time.Millisecond) // past the watcher's look for a push
	appendTo(t, eng, "MEMORY.md", "ne 1\n")
	waitFor(t, "the merge with the ended line", func() bool { return headMemoryHas(t, eng, "\n- A line 1\n", "\n- B line 1\n") })
	for _, ent := range memoryLog(t, eng) {
		data, err := eng.FileAt(ent.Commit, "MEMORY.md")
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(string(data), "- B li") {
			t.Fatalf("the half line was recorded (%s):\n%s", ent.Commit, data)
		}
	}
}

// A line left half appended is merged as it is once engine.UnendedWait is
// over, the watcher holding the file that long: a file saved without its
// final newline is legitimate, and the push is not left unmerged until
// the next edit (the watcher's own hold had ended before).
func TestHalfLineOverPushMergedAfterWait(t *testing.T) {
	// the watcher's own hold of the line outlasts the test: the push is
	// taken by its look (each second), which makes the merge owed, not by
	// an edit
	eng := halfLineOverPush(t, "# Memory\n\n- a\n", time.Hour, 1500*time.Millisecond)
	waitFor(t, "the merge with the line as it is", func() bool { return headMemoryHas(t, eng, "\n- A line 1\n- B li") })
}

// A line half appended while the watcher was not running is held by its
// catch-up (a rescan) as by an event: the watcher started while a writer
// was between two writes recorded the half line, which a sync took to the
// other machine, whose own append joined it (chaos, GLUE=1: `- - A2` on
// both machines).
func TestHalfLineHeldAtCatchUp(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, "MEMORY.md", "# Memory\n\n- a\n")
	k, _ := eng.Config().Classify("MEMORY.md")
	if _, err := eng.Record([]config.Kept{k}, state.SourceRecord); err != nil {
		t.Fatal(err)
	}
	appendTo(t, eng, "MEMORY.md", "- b")
	startHolding(t, eng, time.Minute)
	time.Sleep(300 * time.Millisecond)
	if n := len(memoryLog(t, eng)); n != 1 {
		t.Fatalf("the catch-up recorded the half line: %d versions", n)
	}
	appendTo(t, eng, "MEMORY.md", " done\n")
	waitFor(t, "the completed line to be recorded", func() bool { return headMemoryHas(t, eng, "\n- b done\n") })
}

// A reload of the configuration (.strata.yaml edited) while a half line is
// held does not record it: the reloaded watcher's catch-up holds it again
// (attack42 F2: the reload went through the stop, which records what is
// held, and the half line went to the other machine).
func TestHalfLineHeldAcrossReload(t *testing.T) {
	eng := newRepo(t)
	write(t, eng, "MEMORY.md", "# Memory\n\n- a\n")
	startHolding(t, eng, time.Minute)
	waitFor(t, "the catch-up's record", func() bool { return len(memoryLog(t, eng)) == 1 })
	appendTo(t, eng, "MEMORY.md", "- b")
	time.Sleep(200 * time.Millisecond)
	write(t, eng, config.FileName, "# defaults, touched\n")
	time.Sleep(700 * time.Millisecond) // the reload and its catch-up
	if n := len(memoryLog(t, eng)); n != 1 {
		t.Fatalf("the half line was recorded at the reload: %d versions", n)
	}
	appendTo(t, eng, "MEMORY.md", " done\n")
	waitFor(t, "the completed line to be recorded", func() bool { return headMemoryHas(t, eng, "\n- b done\n") })
}
