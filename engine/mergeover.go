package engine

import (
	"bytes"
	"errors"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/conflict"
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
// The caller must not hold the write-phase lock exclusively (Put records
// under it, shared): a sync calls it once its write phase is over.
func (e *Engine) MergeOverEdits(nw []NotWritten) []NotWritten {
	for i, n := range nw {
		if n.Found != "" || n.Ours == n.Result {
			continue
		}
		if c, err := e.mergeOverEdit(n.Path, n.Ours, n.Result); err == nil && c != "" {
			nw[i].Merged = c
		}
	}
	return nw
}

// mergeOverEdit merges the edit on disk at path with the merged version
// result over ours (MergeOverEdits) and returns the commit that recorded
// the new merge, "" when it wrote nothing.
func (e *Engine) mergeOverEdit(path, ours, result string) (string, error) {
	k, ok := e.cfg.Classify(path)
	if !ok || result == "" || !mergedByContent(k) {
		return "", nil
	}
	f, prob := e.Read(k)
	if prob != nil || !f.Exists || f.ID() == result || f.ID() == ours {
		return "", nil
	}
	var base []byte
	if ours != "" {
		var err error
		if base, err = e.Blob(ours); err != nil {
			return "", err
		}
	}
	res, err := e.Blob(result)
	if err != nil {
		return "", err
	}
	var merged []byte
	if conflict.StrategyFor(k.Class) == conflict.StrategyMemory {
		if merged, err = conflict.MergeMemory(base, res, f.Content); err != nil {
			return "", nil // not mergeable as lines: the edit is recorded as it is
		}
	} else {
		merged, _ = conflict.MergeGraph(base, res, f.Content)
	}
	if bytes.Equal(merged, f.Content) {
		return "", nil // the edit already holds the other side's work
	}
	o, err := e.Put(k, f.ID(), merged, state.SourceSync)
	if errors.Is(err, ErrChanged) {
		return "", nil // edited again: recorded next
	}
	if err != nil || !o.Written || o.Entry == nil {
		return "", err
	}
	return o.Entry.Commit, nil
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
