// Package atomicfile is strata's one way to replace a file so that a crash
// leaves either the old content or the new, never a mix: a temp file beside
// the target, written, fsynced, renamed over the target, and the directory
// fsynced. Every temp file strata writes in a work tree is named with Prefix,
// which the watcher ignores, so strata's own writes in flight are never
// recorded or reported. A Batch on Linux opens each directory it writes in
// once, has the caller judge where it really is (Batch.DirOK), and takes
// every step there relative to that open directory: a folder swapped for a
// symbolic link between the check and the write is never written through;
// and where its caller checks the file it replaces (Batch.Unchanged), it
// swaps the new file in (RENAME_EXCHANGE) and swaps back a file that is not
// the one checked, so an outside save landing after the check is never
// replaced (see replace.go).
package atomicfile

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Prefix begins the base name of every temp file strata writes beside a
// file it replaces.
const Prefix = ".strata-tmp-"

// tempNameMax is the most bytes of a target's base name that its temp
// file's name carries: a longer name is cut and a hash of all of it added
// (tempBase), so that every temp file's name stays well within NAME_MAX
// (255 bytes), whatever the name of the file it replaces.
const tempNameMax = 100

// tempBase is base as a temp file's name carries it: base itself, or when
// longer than tempNameMax, its first bytes (whole UTF-8 characters), "~"
// and 8 hex digits of its SHA-256.
func tempBase(base string) string {
	if len(base) <= tempNameMax {
		return base
	}
	n := tempNameMax - 9
	for n > 0 && !utf8.RuneStart(base[n]) {
		n--
	}
	sum := sha256.Sum256([]byte(base))
	return base[:n] + "~" + hex.EncodeToString(sum[:4])
}

// IsTemp reports whether name (a path, slash- or OS-separated) is one of
// strata's temp files.
func IsTemp(name string) bool {
	base := name
	if i := strings.LastIndexAny(name, `/`+string(filepath.Separator)); i >= 0 {
		base = name[i+1:]
	}
	return strings.HasPrefix(base, Prefix)
}

// WriteTemp writes data to a new temp file in the directory of name (named
// Prefix, name's base, cut when long, this process's id and a random
// suffix), with mode, fsynced and closed, and returns the temp file's
// path. The caller renames it into place or removes it; on error nothing
// is left behind.
func WriteTemp(name string, data []byte, mode fs.FileMode) (string, error) {
	return writeTemp(name, data, mode, true)
}

// writeTemp is WriteTemp, with the fsync only when sync is true.
func writeTemp(name string, data []byte, mode fs.FileMode, sync bool) (string, error) {
	// BASE-PID-RANDOM, as a Batch names its files: Leftovers tells a
	// dead process's from a running one's by the pid
	f, err := os.CreateTemp(filepath.Dir(name), Prefix+tempBase(filepath.Base(name))+"-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", err
	}
	if err := fill(f, data, &mode, sync); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// fill writes data to the new temp file f, gives it mode when mode is not
// nil (os.CreateTemp makes a file 0600), fsyncs it when sync, and closes
// it; the first error is returned, and the caller removes the file then.
func fill(f *os.File, data []byte, mode *fs.FileMode, sync bool) error {
	_, err := f.Write(data)
	if err == nil && mode != nil {
		err = f.Chmod(*mode)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Write replaces name with data atomically: WriteTemp, rename over name,
// fsync of the directory. The directory must exist. name, if it exists, is
// replaced whatever it is (callers refuse symbolic links first).
func Write(name string, data []byte, mode fs.FileMode) error {
	return writeVia(name, data, mode, os.Rename)
}

// WriteNew creates name with data atomically as Write does, unless name
// exists: then it writes nothing and returns an error wrapping fs.ErrExist.
// On Linux the check and the creation are one step (RENAME_NOREPLACE), so a
// file that appears at name meanwhile is never replaced.
func WriteNew(name string, data []byte, mode fs.FileMode) error {
	return writeVia(name, data, mode, renameNew)
}

// writeVia is Write and WriteNew: WriteTemp, rename (which puts the temp
// file at name, or fails and leaves it to be removed), fsync of the
// directory.
func writeVia(name string, data []byte, mode fs.FileMode, rename func(tmp, name string) error) error {
	tmp, err := WriteTemp(name, data, mode)
	if err != nil {
		return err
	}
	if err := rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	SyncDir(filepath.Dir(name))
	return nil
}

// SyncDir fsyncs a directory, so a rename in it survives a crash. It is
// best effort: some file systems cannot sync a directory.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
