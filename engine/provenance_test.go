package engine

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

// TestProvenanceLogStaysSmall: the hook's notes are appended to one log; a
// record voids the notes it used, and once the log passes its size bound a
// record rewrites it with only the open notes, which still work afterwards.
func TestProvenanceLogStaysSmall(t *testing.T) {
	e := newRepo(t)
	const files = 40
	ws := func(i, round int) string {
		return fmt.Sprintf(`{"type": "APEX", "phase": "plan", "lastUpdated": "2026-11-22T10:%02d:%02dZ"}`+"\n", round%60, i%60)
	}
	paths := make([]string, files)
	for i := range paths {
		paths[i] = fmt.Sprintf(".claude/workflow-state-%02d.json", i)
	}
	// Notes for files never recorded stay open through every trim.
	open := kept(t, e, ".claude/workflow-state-open.json")
	if err := e.NoteProvenance(open, []byte("later"), "sess-open", "toolu_open"); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 30; round++ {
		for i, p := range paths {
			content := ws(i, round)
			edit(t, e, p, content)
			if err := e.NoteProvenance(kept(t, e, p), []byte(content), fmt.Sprintf("sess-%d-%d", round, i), "toolu_x"); err != nil {
				t.Fatal(err)
			}
		}
		record(t, e, paths...)
		for i, p := range paths {
			ents, err := e.Log(state.LogQuery{Path: p, Limit: 1})
			if want := fmt.Sprintf("sess-%d-%d", round, i); err != nil || len(ents) != 1 || ents[0].Session != want {
				t.Fatalf("round %d: %s recorded without its note %s: %+v, %v", round, p, want, ents, err)
			}
		}
	}
	fi, err := os.Stat(e.provenanceLog())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > provenanceTrimAt+files*200 {
		t.Errorf("provenance log is %d bytes after 1 200 notes, bound %d", fi.Size(), provenanceTrimAt)
	}
	notes, _ := e.provenanceNotes()
	if n := notes[open.Path]; n.Session != "sess-open" {
		t.Errorf("the open note was lost in a trim: %+v", n)
	}
	for _, p := range paths {
		if n, ok := notes[p]; ok && n.Blob != "" {
			t.Errorf("%s: used note still open: %+v", p, n)
		}
	}
}

// TestProvenanceLineChecksum: a line whose bytes do not match its checksum
// (torn by a crash, or two lines mixed) is not a note.
func TestProvenanceLineChecksum(t *testing.T) {
	line, err := provenanceLine(provenanceNote{Path: ".claude/a.json", Blob: strings.Repeat("ab", 20), Session: "s1", ToolUse: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	line = line[:len(line)-1] // the newline
	if n, ok := parseProvenanceLine(line); !ok || n.Session != "s1" {
		t.Fatalf("a whole line: %+v, %v", n, ok)
	}
	for cut := 1; cut < len(line); cut++ {
		if _, ok := parseProvenanceLine(line[:cut]); ok {
			t.Errorf("line cut at %d parsed", cut)
		}
	}
	mixed := []byte(strings.Replace(string(line), `"s1"`, `"s2"`, 1))
	if _, ok := parseProvenanceLine(mixed); ok {
		t.Error("a line with other ids than its checksum parsed")
	}
}

// TestProvenanceLogBoundedWithoutRecords: hook calls with nothing recording
// (no watcher) keep the log bounded and its newest notes.
func TestProvenanceLogBoundedWithoutRecords(t *testing.T) {
	e := newRepo(t)
	k := kept(t, e, ".claude/workflow-state.json")
	for i := 0; i < 3000; i++ {
		if err := e.NoteProvenance(k, fmt.Appendf(nil, "v%d", i), fmt.Sprintf("sess-%d", i), "toolu_x"); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(e.provenanceLog()); err != nil || fi.Size() > 4*provenanceTrimAt+200 {
		t.Fatalf("log after 3 000 notes: %v, %v", fi.Size(), err)
	}
	if notes, _ := e.provenanceNotes(); notes[k.Path].Session != "sess-2999" {
		t.Errorf("newest note lost: %+v", notes[k.Path])
	}
}
