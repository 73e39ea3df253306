package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/conflict"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
)

// MergeOverEdits keeps both sides where a sync could not write the merged
// version of a MEMORY.md or an MCP graph because the file was edited on
// disk meanwhile — while the sync wrote (live), or after it was killed
// (its journal, completed by the next command). The edit was made on the
// version the merge started from (ours): recorded over the merged version
// as it is, it took out every line and entity the other machine had added,
// on both machines, and nobody was told (attack20-headline H2). So the edit
// is merged again, three-way, over ours with the merged version (result) as
// the earlier side and the edit as the later one, by the class's own merge
// (lines for MEMORY.md, entities and relations for the graph), and that is
// written in its place with Put: the edit is recorded first, then the new
// merge. A file of another class, one edited again meanwhile, or an edit
// that already holds what the merge would add is left as it is (recorded
// next, over the merged version, as before). Each NotWritten merged gets
// Merged, the commit that recorded the new merge.
//
// An edit that is invalid (a half-written line, a broken entity) cannot be
// merged: it is quarantined as any invalid version, and the merge to make
// is kept (<gitdir>/strata/merge-again.json) for the record that finds the
// file fixed, which merges the fixed version the same way before recording
// anything else (attack20-final M1: the fix was recorded over the merge,
// the other machine's lines gone again). Such a NotWritten gets Later.
//
// The caller must not hold the write-phase lock exclusively (Put records
// under it, shared): a sync calls it once its write phase is over.
func (e *Engine) MergeOverEdits(nw []NotWritten) []NotWritten {
	var later []mergeAgain
	for i, n := range nw {
		if n.Found != "" || n.Ours == n.Result {
			continue
		}
		c, deferred, err := e.mergeOverEdit(n.Path, n.Ours, n.Result)
		switch {
		case err != nil:
		case deferred:
			nw[i].Later = true
			later = append(later, mergeAgain{Path: n.Path, Ours: n.Ours, Result: n.Result, Restore: n.Restore})
		case c != "":
			nw[i].Merged = c
		}
	}
	if len(later) > 0 {
		e.keepMergeAgain(later)
	}
	return nw
}

// mergeOverEdit merges the edit on disk at path with the merged version
// result over ours (MergeOverEdits) and returns the commit that recorded
// the new merge, "" when it wrote nothing; deferred when the edit is
// invalid, to be merged once fixed.
func (e *Engine) mergeOverEdit(path, ours, result string) (commit string, deferred bool, err error) {
	k, ok := e.cfg.Classify(path)
	if !ok || result == "" || !mergedByContent(k) {
		return "", false, nil
	}
	f, prob := e.Read(k)
	if prob != nil || !f.Exists || f.ID() == result {
		return "", false, nil
	}
	if f.ID() == ours {
		// back at the version the merge started from (the invalid line
		// taken out again): the merged version is written, as the sync
		// would have; recorded over the merge, it took the other machine's
		// lines out on both machines (attack20-last M4)
		wrote, err := e.checkout(k, ours, result)
		if err != nil || !wrote {
			return "", false, err
		}
		head, err := e.Head()
		return head, false, err
	}
	if e.v.ValidateAs(k.Path, f.Content, k.Schema, k.Format).Invalid() {
		return "", true, nil
	}
	var base []byte
	if ours != "" {
		if base, err = e.Blob(ours); err != nil {
			return "", false, err
		}
	}
	res, err := e.Blob(result)
	if err != nil {
		return "", false, err
	}
	var merged []byte
	if conflict.StrategyFor(k.Class) == conflict.StrategyMemory {
		if merged, err = conflict.MergeMemory(base, res, f.Content); err != nil {
			return "", false, nil // not mergeable as lines: the edit is recorded as it is
		}
	} else {
		merged, _ = conflict.MergeGraph(base, res, f.Content)
	}
	if bytes.Equal(merged, f.Content) {
		return "", false, nil // the edit already holds the other side's work
	}
	o, err := e.Put(k, f.ID(), merged, state.SourceSync)
	if errors.Is(err, ErrChanged) {
		return "", false, nil // edited again: recorded next
	}
	if err != nil || !o.Written || o.Entry == nil {
		return "", false, err
	}
	return o.Entry.Commit, false, nil
}

// mergeAgain is a merge MergeOverEdits could not make yet: the edit at
// Path was invalid.
type mergeAgain struct {
	Path    string `json:"path"`
	Ours    string `json:"ours"`
	Result  string `json:"result"`
	Restore bool   `json:"restore,omitempty"` // Result is a restore's version, not a merge's
}

func (e *Engine) mergeAgainPath() string {
	return filepath.Join(e.store.GitDir(), "strata", "merge-again.json")
}

// keepMergeAgain adds ms to the merges kept for later, under their file's
// lock.
func (e *Engine) keepMergeAgain(ms []mergeAgain) {
	release, err := pidlock.Hold(e.mergeAgainPath()+".lock", e.store.Shared(), true, WritesWait)
	if err != nil {
		return
	}
	defer release()
	have, _ := e.readMergeAgain() // one that cannot be read holds nothing to keep
	for _, m := range ms {
		if !slices.Contains(have, m) {
			have = append(have, m)
		}
	}
	e.writeMergeAgain(have)
}

// readMergeAgain reads the merges kept for later: none when there is no
// file; an error when there is one that cannot be read or does not parse
// (a named pipe, garbage), which is then left as it is and named by
// status, not forgotten (attack20-last M5).
func (e *Engine) readMergeAgain() ([]mergeAgain, error) {
	data, err := state.ReadRegular(e.mergeAgainPath(), 1<<20, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var ms []mergeAgain
	if err := json.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("%s: %v", e.mergeAgainPath(), err)
	}
	return ms, nil
}

func (e *Engine) writeMergeAgain(ms []mergeAgain) {
	name := e.mergeAgainPath()
	if len(ms) == 0 {
		os.Remove(name)
		return
	}
	data, err := json.Marshal(ms)
	if err != nil {
		return
	}
	sh := e.store.Shared()
	if sh.MkdirAll(filepath.Dir(name)) == nil {
		_ = atomicfile.WriteFixed(name, data, sh.FixFile) // as the journal and the losses are written
	}
}

// PendingMerges lists the paths whose merge MergeOverEdits kept for later
// (their edit was invalid), for status to name.
// The error is the file's, when it cannot be read: merges kept there may
// be missing from the list.
func (e *Engine) PendingMerges() ([]string, error) {
	ms, err := e.readMergeAgain()
	var out []string
	for _, m := range ms {
		if !slices.Contains(out, m.Path) {
			out = append(out, m.Path)
		}
	}
	slices.Sort(out)
	return out, err
}

// mergeKeptEdits makes the merges kept for later whose edit is valid now
// (the agent fixed the file), before a record takes the fixed file over
// the merged version; one whose path the state ref no longer holds at the
// merged version (something else was recorded there since) is dropped.
// A record calls it with the write-phase lock held shared; the records it
// makes itself (Put) do not call it again.
func (e *Engine) mergeKeptEdits() {
	if _, err := os.Lstat(e.mergeAgainPath()); err != nil || !e.mergingAgain.CompareAndSwap(false, true) {
		return
	}
	defer e.mergingAgain.Store(false)
	release, err := pidlock.Hold(e.mergeAgainPath()+".lock", e.store.Shared(), true, WritesWait)
	if err != nil {
		return
	}
	defer release()
	_, files, err := e.recorded()
	if err != nil {
		return
	}
	ms, err := e.readMergeAgain()
	if err != nil {
		return // left as it is; status names it
	}
	var keep []mergeAgain
	for _, m := range ms {
		if files[m.Path] != m.Result {
			continue
		}
		c, deferred, err := e.mergeOverEdit(m.Path, m.Ours, m.Result)
		switch {
		case err != nil, deferred:
			keep = append(keep, m)
		case c != "":
			e.noteNotWritten(NotWritten{Path: m.Path, Ours: m.Ours, Result: m.Result, Merged: c, Restore: m.Restore})
		}
	}
	e.writeMergeAgain(keep)
}

// mergedByContent reports whether a sync merges k's versions by their
// content, keeping both sides' additions: MEMORY.md by lines, the MCP graph
// by entities, each under its own schema.
func mergedByContent(k config.Kept) bool {
	switch conflict.StrategyFor(k.Class) {
	case conflict.StrategyMemory:
		return k.Schema == "markdown"
	case conflict.StrategyGraph:
		return k.Schema == "mcp-memory" || k.Schema == "jsonl-mcp"
	}
	return false
}
