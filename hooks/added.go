package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/jsonedit"
	"github.com/strata-dev/strata/pidlock"
	"github.com/strata-dev/strata/state"
)

// Added is what `claude install` changed in one of Claude Code's files
// (.claude/settings.json, .mcp.json), kept in the git directory so that
// `claude uninstall` takes out exactly that: the file alone cannot tell an
// empty "hooks" object or event array the user wrote from one install made
// (`{"hooks":{}}` and `{}` read the same once the entries are in).
type Added struct {
	// Created names, outermost first, the objects and arrays install
	// made to hold its entries (JSON Pointers: "/hooks",
	// "/hooks/SessionStart", "/mcpServers"); uninstall removes one only
	// when it is empty again.
	Created []string `json:"created,omitempty"`
	// Existed is whether the file was there with content (a missing or
	// empty one is left as {} by uninstall); Before is its content then.
	Existed bool   `json:"existed"`
	Before  []byte `json:"before,omitempty"`
	// After is the SHA-256 of the content install wrote.
	After string `json:"after"`
}

// installed makes the record of an install that turned before into after.
func added(existed bool, before, after []byte, created []string) *Added {
	return &Added{Created: created, Existed: existed, Before: before, After: sum(after)}
}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// undo is the content uninstall writes for data, out being data with
// strata's entries and the empty objects install created taken out: the
// file as it was before install, byte for byte, when data is still what
// install wrote and out holds the same JSON as that file (so only layout
// differs: `{\n}` and `{}`, `[ ]` and `[]`); else out.
func (in *Added) undo(data, out []byte) []byte {
	if in = in.current(data); in == nil || !in.Existed || !sameJSON(in.Before, out) {
		return out
	}
	return in.Before
}

// sameJSON reports whether a and b are the same JSON document (numbers
// compared as written), a byte order mark aside.
func sameJSON(a, b []byte) bool {
	da, errA := decodeAny(a)
	db, errB := decodeAny(b)
	return errA == nil && errB == nil && reflect.DeepEqual(da, db)
}

func decodeAny(data []byte) (any, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil // a missing or empty file reads as {}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// addedFile is where the records live: one JSON object, path → record.
func addedFile(gitDir string) string {
	return filepath.Join(gitDir, "strata", "claude-added.json")
}

// NoteLimit is the most ReadAdded reads of the record file, for settings
// files of at most maxSize bytes: each record holds one file's content
// before install (base64, 4/3 of it) and a few pointers, and there are
// two, so 4 × maxSize is past anything install writes.
func NoteLimit(maxSize int64) int64 { return 4*maxSize + 4096 }

// NoteError is a record file that cannot be read (a named pipe, a
// directory, a symbolic link, one over NoteLimit) or does not parse.
// It is safe to go on as if there were none: uninstall then keeps the
// empty objects and arrays install made.
type NoteError struct {
	Path   string // the record file
	Reason string
}

func (e *NoteError) Error() string { return e.Path + ": " + e.Reason }

// ReadAdded returns the record of the last install into path (a
// work-tree relative name: SettingsPath, MCPPath), nil when there is none;
// a record file of more than limit bytes, or that cannot be read or
// parsed, is a *NoteError. The file is read without following a link or
// blocking on a named pipe.
func ReadAdded(gitDir, path string, limit int64) (*Added, error) {
	all, err := readAdded(gitDir, limit)
	if err != nil {
		return nil, err
	}
	return all[path], nil
}

func readAdded(gitDir string, limit int64) (map[string]*Added, error) {
	name := addedFile(gitDir)
	data, err := state.ReadRegular(name, limit, false)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*Added{}, nil
	} else if err != nil {
		reason := err.Error()
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = pe.Err.Error()
		}
		return nil, &NoteError{Path: name, Reason: reason}
	}
	all := map[string]*Added{}
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, &NoteError{Path: name, Reason: err.Error()}
	}
	return all, nil
}

// NoteStep, set by tests only, is called at the steps of the record's
// read-modify-write: "wait" when HoldAdded finds the lock held and waits
// for it, "read" once SaveAdded has read the records it will write back.
var NoteStep func(step string)

// HoldAdded takes the exclusive flock(2) on <gitdir>/strata/
// claude-added.json.lock, waiting up to wait for another holder, and
// returns its release. claude install and uninstall hold it from their
// first read of the record (and of the files they edit) to their last
// write, so that two of them never both read the record and each write
// their own version back, the second dropping what the first noted. The
// kernel drops the lock when its holder dies (no stale lock to take
// over); the file is never removed (the lock lives on its inode). Past
// wait the error wraps state.ErrLocked.
func HoldAdded(gitDir string, sh gitperm.Shared, wait time.Duration) (release func(), err error) {
	name := addedFile(gitDir) + ".lock"
	release, err = pidlock.Hold(name, sh, true, 0)
	if held := (*pidlock.HeldError)(nil); errors.As(err, &held) {
		if NoteStep != nil {
			NoteStep("wait")
		}
		release, err = pidlock.Hold(name, sh, true, wait)
	}
	if held := (*pidlock.HeldError)(nil); errors.As(err, &held) {
		return nil, fmt.Errorf("another claude install or uninstall is running here (%s held for %s); try again: %w", name, wait, state.ErrLocked)
	}
	return release, err
}

// CheckAdded says why SaveAdded could not write the record file, nil when
// it can as far as can be told without writing: a directory that is not
// empty at its name (SaveAdded removes anything else ReadAdded refuses),
// or a file where its directory <gitdir>/strata goes. claude install and
// uninstall check it before they write a settings file, so that they do
// not write one and then fail to note what they added.
func CheckAdded(gitDir string) error {
	name := addedFile(gitDir)
	if st, err := os.Lstat(filepath.Dir(name)); err == nil && !st.IsDir() {
		return fmt.Errorf("%s: not a directory, where strata keeps its record of what claude install added; nothing written. Move it away and run this again", filepath.Dir(name))
	}
	st, err := os.Lstat(name)
	if err != nil || !st.IsDir() {
		return nil
	}
	d, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer d.Close()
	if _, err := d.Readdirnames(1); errors.Is(err, io.EOF) {
		return nil // empty: SaveAdded removes it
	}
	return fmt.Errorf("%s: a directory that is not empty, where strata keeps its record of what claude install added; nothing written. Move it away and run this again", name)
}

// SaveAdded keeps in as the record of path's install, or with in nil
// forgets it (after an uninstall). A record file ReadAdded would refuse
// (a *NoteError) is replaced: the records it held are lost, as they were
// to ReadAdded.
func SaveAdded(gitDir string, sh gitperm.Shared, path string, in *Added, limit int64) error {
	name := addedFile(gitDir)
	all, err := readAdded(gitDir, limit)
	if NoteStep != nil {
		NoteStep("read")
	}
	var bad *NoteError
	switch {
	case errors.As(err, &bad):
		// a named pipe, a link, an empty directory: out of the way (a
		// link goes, never what it points to)
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		all = map[string]*Added{}
	case err != nil:
		return err
	}
	if in == nil {
		if _, ok := all[path]; !ok && bad == nil {
			return nil
		}
		delete(all, path)
	} else {
		all[path] = in
	}
	if len(all) == 0 {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	if err := sh.MkdirAll(filepath.Dir(name)); err != nil {
		return err
	}
	return atomicfile.WriteFixed(name, data, sh.FixFile)
}

// current is in when data is still the content install wrote (its
// SHA-256 is After), else nil: a file changed since (edited, checked
// out, its entries taken out and put back by hand) may hold objects and
// arrays of the user's at the pointers install noted, which must stay.
func (in *Added) current(data []byte) *Added {
	if in == nil || in.After != sum(data) {
		return nil
	}
	return in
}

// splitPointer reads a JSON Pointer into its keys.
func splitPointer(ptr string) []string {
	keys := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, k := range keys {
		keys[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(k)
	}
	return keys
}

// isEmpty reports whether raw is an empty object or array.
func isEmpty(raw []byte) bool {
	var c bytes.Buffer
	if json.Compact(&c, raw) != nil {
		return false
	}
	return c.String() == "{}" || c.String() == "[]"
}

// valueAt returns the value at keys in the JSON object data (each key's
// last occurrence), ok false when there is none.
func valueAt(data []byte, keys []string) (json.RawMessage, bool) {
	raw := json.RawMessage(data)
	for _, k := range keys {
		o, err := decodeObject(raw)
		if err != nil {
			return nil, false
		}
		var ok bool
		if raw, ok = o.get(k); !ok {
			return nil, false
		}
	}
	return raw, true
}

// dropCreated removes from data, innermost first, each object or array
// install created (created, outermost first) that is empty again.
func dropCreated(path string, data []byte, created []string) ([]byte, error) {
	for i := len(created) - 1; i >= 0; i-- {
		keys := splitPointer(created[i])
		if raw, ok := valueAt(data, keys); ok && isEmpty(raw) {
			var err error
			if data, err = jsonedit.Delete(data, keys); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return data, nil
}
