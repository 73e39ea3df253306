package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// TestBlameReadsBackOnlyAsFarAsItNeeds: a blame whose every key changed in
// the last version reads the version before it and nothing older. The first
// version's commit is removed from the object store after the history was
// indexed: listing the whole history fails on it, the blame does not.
func TestBlameReadsBackOnlyAsFarAsItNeeds(t *testing.T) {
	e := newRepo(t)
	const path = ".claude/notes.json"
	for _, v := range []string{`{"a": 0, "b": 0}`, `{"a": 1, "b": 1}`, `{"a": 2, "b": 2}`} {
		edit(t, e, path, v+"\n")
		record(t, e, path)
	}
	k := kept(t, e, path)
	if _, err := e.Blame(k, ""); err != nil { // indexes the history, as any earlier command would
		t.Fatal(err)
	}
	ents, err := e.store.Log(e.store.StateRef(), state.LogQuery{Path: path})
	if err != nil || len(ents) != 3 {
		t.Fatalf("log: %v, %d entries", err, len(ents))
	}
	first, last := ents[2].Commit, ents[0].Commit
	obj := filepath.Join(e.Config().Root, ".git", "objects", first[:2], first[2:])
	if err := os.Remove(obj); err != nil {
		t.Fatalf("the first version's commit is not a loose object: %v", err)
	}

	e, err = Open(e.Config().Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Log(e.store.StateRef(), state.LogQuery{Path: path}); err == nil {
		t.Fatal("the whole history still lists without the first commit: the test proves nothing")
	}
	lines, err := e.Blame(k, "")
	if err != nil {
		t.Fatalf("blame read back further than it needed: %v", err)
	}
	if len(lines) != 2 {
		t.Fatalf("blame: %+v", lines)
	}
	for _, l := range lines {
		if l.Commit != last {
			t.Errorf("%s = %s blamed on %s, want the last version's commit %s", l.Key, l.Value, state.ShortID(l.Commit), state.ShortID(last))
		}
	}
}

// TestBlameAcrossEntryBlocks: a blame whose answer lies hundreds of versions
// back, past the blocks lazyHistory keeps its entries in, names the commit
// of each key's oldest version in its run.
func TestBlameAcrossEntryBlocks(t *testing.T) {
	e := newRepo(t)
	const path = ".claude/notes.json"
	const versions, mid = 3*entryBlock + 7, entryBlock + 44
	k := kept(t, e, path)
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for v := 0; v < versions; v++ {
		content := fmt.Sprintf("{\"since\": 0, \"mid\": %d, \"n\": %d}\n", min(v, mid)/mid, v)
		ch := state.Change{Path: path, Content: []byte(content), Class: k.Class, Schema: k.Schema, Source: state.SourceRecord, Time: t0.Add(time.Duration(v) * time.Second)}
		if _, err := e.store.Record(ch); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := e.store.Log(e.store.StateRef(), state.LogQuery{Path: path})
	if err != nil || len(ents) != versions {
		t.Fatalf("log: %v, %d entries", err, len(ents))
	}
	want := map[string]string{ // newest first: version v is ents[versions-1-v]
		"/since": ents[versions-1].Commit,
		"/mid":   ents[versions-1-mid].Commit,
		"/n":     ents[0].Commit,
	}
	lines, err := e.Blame(k, "")
	if err != nil || len(lines) != len(want) {
		t.Fatalf("blame: %v, %+v", err, lines)
	}
	for _, l := range lines {
		if l.Commit != want[l.Key] {
			t.Errorf("%s blamed on %s, want %s", l.Key, state.ShortID(l.Commit), state.ShortID(want[l.Key]))
		}
	}
}

// TestBlameStopsItsReader: the versions are read ahead of the walk in a
// goroutine; a blame that stops early (every key changed in the last
// version) stops that reader and waits for it before it returns, so
// nothing reads the store once Blame has returned.
func TestBlameStopsItsReader(t *testing.T) {
	e := newRepo(t)
	const path = ".claude/notes.json"
	for v := range 4 * readAhead {
		edit(t, e, path, fmt.Sprintf("{\"a\": %d}\n", v))
		record(t, e, path)
	}
	k := kept(t, e, path)
	for range 20 {
		lines, err := e.Blame(k, "")
		if err != nil || len(lines) != 1 {
			t.Fatalf("blame: %v, %+v", err, lines)
		}
		if n := historyReaders.Load(); n != 0 {
			t.Fatalf("%d history readers run after the blame returned", n)
		}
	}
}
