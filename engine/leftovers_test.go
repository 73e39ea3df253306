package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// A restore killed between writing its temp files and renaming them left
// them beside the files it restored; the next restore removes them (those
// of processes no longer running only), where before they stayed for good.
func TestRestoreRemovesLeftoverTempFiles(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/a.json")
	edit(t, e, k.Path, `{"v": 1}`)
	record(t, e, k.Path)
	first := mustHead(t, e)
	edit(t, e, k.Path, `{"v": 2}`)
	record(t, e, k.Path)

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1) to get a finished process's id")
	}
	dir := filepath.Dir(e.Config().Abs(k.Path))
	left := filepath.Join(dir, fmt.Sprintf("%sa.json-%d-123456", atomicfile.Prefix, dead.Process.Pid))
	live := filepath.Join(dir, fmt.Sprintf("%sa.json-%d-654321", atomicfile.Prefix, os.Getpid()))
	for _, n := range []string{left, live} {
		// the version the killed restore was writing, a recorded one
		if err := os.WriteFile(n, []byte(`{"v": 1}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Restore([]config.Kept{k}, Point{Rev: first}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(left); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed restore's temp file is still there: %v", err)
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("a running process's temp file was removed: %v", err)
	}
	if got := onDisk(t, e, k.Path); got != `{"v": 1}` {
		t.Errorf("restored %q", got)
	}
}

// deadPid is the id of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1) to get a finished process's id")
	}
	return dead.Process.Pid
}

// leaveTemp puts content at a temp name of path's that a process no longer
// running left, as a strata killed right after its swap leaves the file
// it swapped out, and returns that name.
func leaveTemp(t *testing.T, e *Engine, path, content string) string {
	t.Helper()
	dir := filepath.Dir(e.Config().Abs(path))
	name := filepath.Join(dir, fmt.Sprintf("%s%s-%d-1", atomicfile.Prefix, filepath.Base(path), deadPid(t)))
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// holds reports whether one of the entries' commits holds content at path.
func holds(t *testing.T, e *Engine, ents []state.Entry, path, content string) bool {
	t.Helper()
	for _, ent := range ents {
		if blob, err := e.store.BlobID(ent.Commit, path); err == nil && blob == gitstore.BlobHash([]byte(content)) {
			return true
		}
	}
	return false
}

func stateLog(t *testing.T, e *Engine, path string) []state.Entry {
	t.Helper()
	ents, err := e.Log(state.LogQuery{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

func gone(t *testing.T, name string) {
	t.Helper()
	if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there: %v", filepath.Base(name), err)
	}
}

// A strata killed right after swapping its new version in (a restore, a
// sync, a Put) leaves the file it swapped out at its temp name: maybe an
// agent's save that landed right before the swap, in no ref. The next
// command's sweep of leftovers records it as a version of the file first
// (an invalid one on the rejected ref), then removes the temp file; it
// used to remove it, and the save was lost.
func TestLeftoverOfAKilledSwapIsRecorded(t *testing.T) {
	for _, tc := range []struct{ name, saved string }{
		{"valid", `{"v": 3, "agent": "saved right before the swap"}`},
		{"invalid", `{"v": 3, "agent": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRepo(t)
			const path = ".claude/a.json"
			edit(t, e, path, `{"v": 1}`)
			record(t, e, path)
			edit(t, e, path, `{"v": 2}`)
			record(t, e, path)
			edit(t, e, path, `{"v": 1}`) // what the killed restore swapped in
			left := leaveTemp(t, e, path, tc.saved)

			if _, err := e.Unrecorded(); err != nil { // every record, sync, watcher rescan
				t.Fatal(err)
			}
			gone(t, left)
			ents := stateLog(t, e, path)
			if tc.name == "invalid" {
				if ents, _ = e.RejectedLog(state.LogQuery{Path: path}); len(ents) == 0 {
					t.Fatal("nothing on the rejected ref")
				}
			}
			if !holds(t, e, ents, path, tc.saved) {
				t.Fatalf("the save left at the temp name is in no ref and was removed: %+v", ents)
			}
			if got := onDisk(t, e, path); got != `{"v": 1}` {
				t.Errorf("the file is now %q", got)
			}
			record(t, e, path) // then what is on disk, as any edit
			if h := stateLog(t, e, path); !holds(t, e, h[:1], path, `{"v": 1}`) {
				t.Errorf("the version on disk is not recorded last")
			}
		})
	}
}

// A leftover whose content the store holds (a recorded version, the new
// version a killed restore or sync was writing) is removed and nothing is
// recorded; one of a running process stays; one that cannot be recorded
// (no kept file it was for) stays where it is.
func TestSafeLeftoverIsRemovedUnsafeOneKept(t *testing.T) {
	e := newRepo(t)
	const path = ".claude/a.json"
	edit(t, e, path, `{"v": 1}`)
	record(t, e, path)
	edit(t, e, path, `{"v": 2}`)
	record(t, e, path)
	head := mustHead(t, e)
	left := leaveTemp(t, e, path, `{"v": 1}`)
	dir := filepath.Dir(left)
	live := filepath.Join(dir, fmt.Sprintf("%sa.json-%d-7", atomicfile.Prefix, os.Getpid()))
	orphan := filepath.Join(dir, fmt.Sprintf("%snot-kept.txt-%d-1", atomicfile.Prefix, deadPid(t)))
	for _, n := range []string{live, orphan} {
		if err := os.WriteFile(n, []byte("never recorded"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Unrecorded(); err != nil {
		t.Fatal(err)
	}
	gone(t, left)
	for _, n := range []string{live, orphan} {
		if _, err := os.Lstat(n); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(n), err)
		}
	}
	if h := mustHead(t, e); h != head {
		t.Errorf("removing a recorded version's leftover recorded something: %s", h)
	}
	if rej, _ := e.RejectedLog(state.LogQuery{}); len(rej) != 0 {
		t.Errorf("quarantined %+v", rej)
	}
}

// A Put killed before its rename leaves its own new version at the temp
// name. Put stores that version's blob before it writes the temp file, so
// the sweep knows it for strata's own and removes it: never recorded as a
// version nobody saved.
func TestPutLeftoverIsNotRecorded(t *testing.T) {
	e := newRepo(t)
	const path = ".claude/a.json"
	edit(t, e, path, `{"v": 1}`)
	record(t, e, path)
	k := kept(t, e, path)
	name := e.Config().Abs(path)
	var left string
	onStep(t, "added "+path, func() {
		// the temp file a kill now would leave, under a dead process's id;
		// and an agent's save, so that this Put writes and records nothing
		ents, _ := os.ReadDir(filepath.Dir(name))
		for _, ent := range ents {
			if atomicfile.IsTemp(ent.Name()) {
				data, err := os.ReadFile(filepath.Join(filepath.Dir(name), ent.Name()))
				if err != nil {
					t.Fatal(err)
				}
				left = leaveTemp(t, e, path, string(data))
			}
		}
		saveAs(t, e, path, `{"v": "agent"}`)
	})
	_, err := e.Put(k, gitstore.BlobHash([]byte(`{"v": 1}`)), []byte(`{"v": "put"}`), state.SourceResolve)
	if !errors.Is(err, ErrChanged) {
		t.Fatalf("Put: %v, want ErrChanged", err)
	}
	if left == "" {
		t.Fatal("no temp file seen")
	}
	head := mustHead(t, e)
	if _, err := e.Unrecorded(); err != nil {
		t.Fatal(err)
	}
	gone(t, left)
	if h := mustHead(t, e); h != head {
		t.Errorf("the Put's own leftover was recorded as a version")
	}
	if rej, _ := e.RejectedLog(state.LogQuery{}); len(rej) != 0 {
		t.Errorf("quarantined %+v", rej)
	}
}

// A sync killed after its swap of a file it owed: the journal's completion
// records the agent's save left at the temp name over the merged version,
// removes the temp file and names it (NotWritten.Found), instead of
// removing it and saying the edit is recorded when nothing was.
func TestRecoverWritesRecordsTheSaveASwapLeft(t *testing.T) {
	e := newRepo(t)
	const path = ".claude/a.json"
	edit(t, e, path, `{"v": "ours"}`)
	record(t, e, path)
	from := mustHead(t, e)
	edit(t, e, path, `{"v": "merged"}`)
	record(t, e, path) // the ref moved to the merged version
	ours, merged := gitstore.BlobHash([]byte(`{"v": "ours"}`)), gitstore.BlobHash([]byte(`{"v": "merged"}`))
	if err := e.BeginWrites(from, []JournalEntry{{Path: path, Ours: ours, Result: merged}}, nil); err != nil {
		t.Fatal(err)
	}
	const saved = `{"v": "agent, saved right before the sync's swap"}`
	left := leaveTemp(t, e, path, saved)

	outs := record(t, e, path)
	gone(t, left)
	nw := e.TakeNotWritten()
	if len(nw) != 1 || nw[0].Path != path || nw[0].Found == "" || nw[0].FoundRejected {
		t.Fatalf("not written %+v, want the save found", nw)
	}
	if blob, err := e.store.BlobID(nw[0].Found, path); err != nil || blob != gitstore.BlobHash([]byte(saved)) {
		t.Errorf("Found %s holds %s, %v", nw[0].Found, blob, err)
	}
	if !holds(t, e, stateLog(t, e, path), path, saved) {
		t.Fatal("the agent's save is in no ref")
	}
	if len(outs) != 1 || outs[0].Entry == nil || !strings.Contains(onDisk(t, e, path), "merged") {
		t.Errorf("the merged version on disk is not recorded next: %+v", outs)
	}
	if _, err := os.Lstat(e.journalPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal left: %v", err)
	}
}

// A sync killed after it had written a file it owed: the file already
// holds the merged version, so the journal's completion says nothing of it
// (attack19-crash 2: "not written PATH: edited on disk after an
// interrupted sync" for every file the sync had written, nobody having
// edited them); a file still holding an edit is named as before.
func TestRecoverWritesQuietForWhatTheSyncWrote(t *testing.T) {
	e := newRepo(t)
	const a, b = ".claude/a.json", ".claude/b.json"
	edit(t, e, a, `{"v": "ours"}`)
	edit(t, e, b, `{"v": "ours"}`)
	record(t, e, a, b)
	from := mustHead(t, e)
	edit(t, e, a, `{"v": "merged"}`)
	edit(t, e, b, `{"v": "merged"}`)
	record(t, e, a, b) // the ref moved to the merged versions, which are on disk: written
	edit(t, e, b, `{"v": "edited after"}`)
	ours, merged := gitstore.BlobHash([]byte(`{"v": "ours"}`)), gitstore.BlobHash([]byte(`{"v": "merged"}`))
	if err := e.BeginWrites(from, []JournalEntry{{Path: a, Ours: ours, Result: merged}, {Path: b, Ours: ours, Result: merged}}, nil); err != nil {
		t.Fatal(err)
	}
	nw, _, err := e.RecoverWrites()
	if err != nil {
		t.Fatal(err)
	}
	if len(nw) != 1 || nw[0].Path != b {
		t.Fatalf("not written %+v, want only %s", nw, b)
	}
}

// A journal over maxJournal is damaged, as one that is not JSON: never
// read whole (a 2 GB sparse file cost record and doctor 2.1 GB of memory,
// attack34 L4), and removed by the next record; none that large is
// written: the sync stops before its ref moves.
func TestJournalOverMaxIsDamaged(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	record(t, e, ".claude/a.json")
	name := e.journalPath()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(maxJournal) + 1); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	owed, err := e.PendingWrites()
	if err != nil || len(owed) != 0 {
		t.Fatalf("PendingWrites = %v, %v; want none", owed, err)
	}
	nw, lost, err := e.RecoverWrites()
	if err != nil || len(nw) != 0 || len(lost) != 0 {
		t.Fatalf("RecoverWrites = %v, %v, %v; want nothing", nw, lost, err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(maxJournal)/4 {
		t.Errorf("allocated %d bytes for a journal over the bound; it is not read", got)
	}
	if _, err := os.Lstat(name); !os.IsNotExist(err) {
		t.Errorf("the damaged journal is still there: %v", err)
	}

	defer func(n int) { maxJournal = n }(maxJournal)
	maxJournal = 1000
	long := make([]JournalEntry, 20)
	for i := range long {
		long[i] = JournalEntry{Path: fmt.Sprintf(".claude/f%02d.json", i), Ours: "", Result: strings.Repeat("a", 40)}
	}
	err = e.BeginWrites(mustHead(t, e), long, nil)
	if err == nil || !strings.Contains(err.Error(), "over the 1000 strata reads back") {
		t.Fatalf("BeginWrites over the bound = %v", err)
	}
	if _, err := os.Lstat(name); !os.IsNotExist(err) {
		t.Errorf("a journal over the bound was written: %v", err)
	}
}

// A strata killed between writing one of its own files in the git
// directory (the sync journal, sync-not-taken.json, ...) to its temp name
// and renaming it left the temp file there for good: the sweep walked only
// the kept files' folders. Now the next sweep removes those of processes
// no longer running, and leaves a running one's and every other file.
func TestOwnLeftoversInGitDirRemoved(t *testing.T) {
	e := newRepo(t)
	edit(t, e, ".claude/a.json", `{"v": 1}`)
	record(t, e, ".claude/a.json")
	dir := filepath.Join(e.store.GitDir(), "strata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dead := deadPid(t)
	index := filepath.Join(e.store.CommonDir(), "strata", "index")
	if err := os.MkdirAll(index, 0o755); err != nil {
		t.Fatal(err)
	}
	left := []string{
		filepath.Join(dir, fmt.Sprintf("%ssync-journal-%d-1", atomicfile.Prefix, dead)),
		filepath.Join(dir, fmt.Sprintf("%ssync-not-taken.json-%d-2", atomicfile.Prefix, dead)),
		filepath.Join(index, fmt.Sprintf("%srefs%%2Fstrata%%2Fstate.idx-%d-4", atomicfile.Prefix, dead)),
	}
	kept := []string{
		filepath.Join(dir, fmt.Sprintf("%sgitrules-head-%d-3", atomicfile.Prefix, os.Getpid())),
		filepath.Join(dir, "sync-lost.json"),
	}
	for _, n := range append(left, kept...) {
		if err := os.WriteFile(n, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Unrecorded(); err != nil {
		t.Fatal(err)
	}
	for _, n := range left {
		gone(t, n)
	}
	for _, n := range kept {
		if _, err := os.Lstat(n); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(n), err)
		}
	}
}
