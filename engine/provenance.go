package engine

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// Provenance: Claude Code's PostToolUse hook (strata validate --hook) names
// the session and the tool call that wrote a kept file. The hook records
// nothing (the watcher does), so it leaves a note — the path, the blob id of
// the content it saw, the two ids — in <gitdir>/strata/provenance/, and the
// commit that records exactly that content carries them as Strata-Session
// and Strata-Tool-Use trailers. A note for content that was not recorded
// (the file changed again first) is dropped when the path is next recorded.
// If the watcher records the version before the hook runs (it waits for its
// debounce, so this is rare), that commit has no provenance.

type provenanceNote struct {
	Path    string `json:"path"`
	Blob    string `json:"blob"`
	Session string `json:"session,omitempty"`
	ToolUse string `json:"tool_use,omitempty"`
}

func (e *Engine) provenanceFile(path string) string {
	sum := sha1.Sum([]byte(path))
	return filepath.Join(e.store.GitDir(), "strata", "provenance", hex.EncodeToString(sum[:])+".json")
}

// NoteProvenance remembers that session and toolUse wrote content to k, for
// the commit that records it. Ids that do not look like ids are dropped;
// with neither left nothing is noted.
func (e *Engine) NoteProvenance(k config.Kept, content []byte, session, toolUse string) error {
	session, toolUse = state.HookID(session), state.HookID(toolUse)
	if session == "" && toolUse == "" {
		return nil
	}
	data, err := json.Marshal(provenanceNote{Path: k.Path, Blob: gitstore.BlobHash(content), Session: session, ToolUse: toolUse})
	if err != nil {
		return err
	}
	name := e.provenanceFile(k.Path)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	// Not synced: a crash loses at most this note (provenance drops a note
	// it cannot read), never a version, and an fsync would cost each hook
	// call more than all its other work.
	return atomicfile.WriteUnsynced(name, data, 0o644)
}

// provenance returns the ids noted for k's content blob, and a func that
// drops the note once the version is recorded. A note for other content is
// stale and dropped at once.
func (e *Engine) provenance(k config.Kept, blob string) (session, toolUse string, done func()) {
	done = func() {}
	name := e.provenanceFile(k.Path)
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) || err != nil {
		return "", "", done
	}
	var n provenanceNote
	if json.Unmarshal(data, &n) != nil || n.Path != k.Path || n.Blob != blob {
		_ = os.Remove(name)
		return "", "", done
	}
	n.Session, n.ToolUse = state.HookID(n.Session), state.HookID(n.ToolUse)
	return n.Session, n.ToolUse, func() { _ = os.Remove(name) }
}
