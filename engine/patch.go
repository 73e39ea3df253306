package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/semantic"
	"github.com/strata-dev/strata/state"
	"github.com/strata-dev/strata/textdiff"
)

type (
	// BlameLine is one key, line or observation with the commit that gave it
	// its value.
	BlameLine = semantic.BlameLine
	// KeyChange is one key-level change (`/phase: "plan" → "implement"`).
	KeyChange = semantic.Change
)

// Patch is how a log entry changed its path against the version before it
// (the commit before it on the ref's chain, en.Parent, else its first
// parent): a unified diff, or with keys the key-level
// changes, one per line. An error says in one line what could not be read
// or compared.
func (e *Engine) Patch(en state.Entry, keys bool) (string, error) {
	var old, cur []byte
	before := en.Parent
	if before == "" {
		before = en.Commit + "^"
	}
	if parent, err := e.Commit(Point{Rev: before}); err == nil {
		old, err = e.FileAt(parent, en.Path)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return "", err
		}
	}
	if en.Action != state.ActionDelete {
		var err error
		if cur, err = e.FileAt(en.Commit, en.Path); err != nil {
			return "", err
		}
	}
	if !keys {
		a, b := state.TermSafe("a/"+en.Path), state.TermSafe("b/"+en.Path) // quoted as git quotes a name
		if old == nil {
			a = "/dev/null"
		}
		if cur == nil {
			b = "/dev/null"
		}
		return textdiff.Unified(a, b, old, cur, 3), nil
	}
	kind, ok := semantic.KindOf(en.Path, en.Class)
	if !ok {
		return "", errors.New("no keys: not JSON, YAML, MEMORY.md or the memory graph")
	}
	changes, err := semantic.Diff(en.Path, kind, old, cur)
	if err != nil {
		return "", fmt.Errorf("%s", strings.SplitN(err.Error(), "\n", 2)[0])
	}
	return semantic.Text(changes), nil
}

// WriteOutput writes what a command's -o FILE names: as WriteUserFile,
// except that a device or a named pipe already at name (`-o /dev/null`,
// `-o /dev/stdout`, a FIFO another program reads) is written into, as a
// shell's redirection writes into it, never replaced by a file: a rename
// over /dev/null, which root may make, would leave every program's
// /dev/null a regular file holding what was written to it.
func WriteOutput(name string, data []byte, mode os.FileMode) error {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&(os.ModeDevice|os.ModeCharDevice|os.ModeNamedPipe) != 0 {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return WriteUserFile(name, data, mode)
}

// UserMode, as WriteUserFile's mode, keeps the mode of the file it
// replaces and gives a new file 0666 less the umask (atomicfile.Default).
const UserMode = atomicfile.Default

// WriteUserFile writes a file the user asked for that strata does not keep
// (a schema, a page, .mcp.json) atomically with mode, creating its
// directory: UserMode, or a mode the file gets exactly. A symbolic link
// at name is replaced, not followed.
func WriteUserFile(name string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(name, data, mode)
}
