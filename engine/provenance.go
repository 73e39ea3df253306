package engine

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// Provenance: Claude Code's PostToolUse hook (strata validate --hook) names
// the session and the tool call that wrote a kept file. The hook records
// nothing (the watcher does), so it appends a note — the path, the blob id
// of the content it saw, the two ids — to <gitdir>/strata/provenance.log,
// and the commit that records exactly that content carries them as
// Strata-Session and Strata-Tool-Use trailers. The newest line for a path
// is its note; a record of the path appends a line that voids it, so a note
// is used at most once and never for content recorded later. If the watcher
// records the version before the hook runs (it waits for its debounce, so
// this is rare), that commit has no provenance.
//
// The log is appended with one write(2) of a newline and one line, O_APPEND,
// no fsync: a
// hook call creates no file (on ext4 a new inode is the costliest part of
// a small write) and flushes nothing. Each line carries a checksum of its
// JSON, so a line a crash tore, or one two writers mixed, is ignored: that
// version's commit has no provenance, and nothing else is lost.

type provenanceNote struct {
	Path    string `json:"path"`
	Blob    string `json:"blob,omitempty"` // "" voids the path's earlier notes
	Session string `json:"session,omitempty"`
	ToolUse string `json:"tool_use,omitempty"`
}

// provenanceTrimAt is the log size past which a record rewrites it with
// only the notes still open.
const provenanceTrimAt = 64 << 10

func (e *Engine) provenanceLog() string {
	return filepath.Join(e.store.GitDir(), "strata", "provenance.log")
}

// lineSum is a line's checksum: FNV-1a 32 of its JSON. It only has to tell a
// torn or mixed line from a whole one (a CRC table would be built at every
// start).
func lineSum(js []byte) uint32 {
	h := fnv.New32a()
	h.Write(js)
	return h.Sum32()
}

// provenanceLine encodes n as one log line: lineSum of the JSON (8 hex
// digits), a space, the JSON, a newline.
func provenanceLine(n provenanceNote) ([]byte, error) {
	data, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "%08x %s\n", lineSum(data), data), nil
}

// appendProvenance appends lines to the log in one write, after a newline,
// so that lines never continue one a crash left torn (blank lines are
// skipped). It returns the log's size after the write, 0 when unknown.
func (e *Engine) appendProvenance(lines []byte) (int64, error) {
	lines = append([]byte{'\n'}, lines...)
	name := e.provenanceLog()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		// Only a new log asks for core.sharedRepository: a hook call on
		// an existing one reads no git configuration.
		f, err = e.store.Shared().OpenFile(name, os.O_WRONLY|os.O_APPEND)
	}
	if err != nil {
		return 0, err
	}
	_, err = f.Write(lines)
	var size int64
	if fi, serr := f.Stat(); serr == nil {
		size = fi.Size()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return size, err
}

// compactProvenance rewrites the log with only its open notes, less those
// in drop that are still the path's newest. Best effort: a note appended
// between the read and the rename is lost (its commit has no provenance).
func (e *Engine) compactProvenance(drop map[string]provenanceNote) {
	notes, _ := e.provenanceNotes()
	var lines []byte
	for p, n := range notes {
		if d, ok := drop[p]; n.Blob == "" || ok && d == n {
			continue
		}
		if l, err := provenanceLine(n); err == nil {
			lines = append(lines, l...)
		}
	}
	_ = atomicfile.WriteUnsynced(e.provenanceLog(), lines, e.store.Shared().FixFile)
}

// NoteProvenance remembers that session and toolUse wrote content to k, for
// the commit that records it. Ids that do not look like ids are dropped;
// with neither left nothing is noted.
func (e *Engine) NoteProvenance(k config.Kept, content []byte, session, toolUse string) error {
	session, toolUse = state.HookID(session), state.HookID(toolUse)
	if session == "" && toolUse == "" {
		return nil
	}
	line, err := provenanceLine(provenanceNote{Path: k.Path, Blob: gitstore.BlobHash(content), Session: session, ToolUse: toolUse})
	if err != nil {
		return err
	}
	size, err := e.appendProvenance(line)
	if err == nil && size > 4*provenanceTrimAt {
		// Hooks without a watcher or record to use the notes: keep the
		// newest per path only.
		e.compactProvenance(nil)
	}
	return err
}

// provenanceNotes reads the log: the newest valid line of each path (a
// voiding line included), and the log's size. A missing or unreadable log
// has no notes.
func (e *Engine) provenanceNotes() (map[string]provenanceNote, int) {
	data, err := state.ReadRegular(e.provenanceLog(), 0, true)
	if err != nil {
		return nil, 0
	}
	notes := map[string]provenanceNote{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if n, ok := parseProvenanceLine(sc.Bytes()); ok {
			notes[n.Path] = n
		}
	}
	return notes, len(data)
}

// parseProvenanceLine decodes one line; a torn or mixed line (sum mismatch)
// or one that does not decode is not a note.
func parseProvenanceLine(line []byte) (provenanceNote, bool) {
	var n provenanceNote
	if len(line) < 10 || line[8] != ' ' {
		return n, false
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return n, false
	}
	js := line[9:]
	if lineSum(js) != uint32(sum[0])<<24|uint32(sum[1])<<16|uint32(sum[2])<<8|uint32(sum[3]) {
		return n, false
	}
	if json.Unmarshal(js, &n) != nil || n.Path == "" {
		return n, false
	}
	n.Session, n.ToolUse = state.HookID(n.Session), state.HookID(n.ToolUse)
	return n, true
}

// provenanceUse is the provenance of one Record call: the log read once,
// the ids of each recorded blob, and the paths whose notes are then void.
type provenanceUse struct {
	e     *Engine
	notes map[string]provenanceNote
	size  int
	read  bool
	used  []string // paths with an open note that were recorded
}

func (u *provenanceUse) load() {
	if !u.read {
		u.notes, u.size = u.e.provenanceNotes()
		u.read = true
	}
}

// ids returns the ids noted for path when its note is for content blob; a
// note for other content is not used.
func (u *provenanceUse) ids(path, blob string) (session, toolUse string) {
	u.load()
	n, ok := u.notes[path]
	if !ok || n.Blob != blob {
		return "", ""
	}
	return n.Session, n.ToolUse
}

// recorded marks path as recorded (a version or its deletion): its open
// note, used or stale, is void.
func (u *provenanceUse) recorded(path string) {
	u.load()
	if n, ok := u.notes[path]; ok && n.Blob != "" {
		u.used = append(u.used, path)
	}
}

// finish appends the voiding lines, or, once the log has grown past
// provenanceTrimAt, rewrites it with the notes still open. Best effort:
// provenance is never worth failing a record for.
func (u *provenanceUse) finish() {
	if len(u.used) == 0 {
		return
	}
	if u.size+len(u.used)*64 < provenanceTrimAt {
		var lines []byte
		for _, p := range u.used {
			if l, err := provenanceLine(provenanceNote{Path: p}); err == nil {
				lines = append(lines, l...)
			}
		}
		_, _ = u.e.appendProvenance(lines)
		return
	}
	drop := map[string]provenanceNote{}
	for _, p := range u.used {
		drop[p] = u.notes[p]
	}
	u.e.compactProvenance(drop)
}
