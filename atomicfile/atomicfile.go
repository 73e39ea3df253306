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
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// Default, given as the mode of a file to write, asks for the mode the
// kernel gives a file created with 0666: less the process's umask, as git
// checkout, cp and editors create files (0644 under umask 022, 0600 under
// 077; never executable). Write gives it only to a new file: a file it
// replaces keeps its own mode. Any other mode is given to the file
// exactly, whatever the umask: callers replacing a file pass its mode.
const Default fs.FileMode = 0

// createPerm is the permission a file written with mode is created with
// (the kernel then takes the umask off): mode's own, or 0666 for Default.
func createPerm(mode fs.FileMode) fs.FileMode {
	if mode.Perm() == Default {
		return 0o666
	}
	return mode.Perm()
}

// exactMode is the fix that gives a file written with mode that mode
// itself (setMode), nil for Default: the file keeps what the kernel gave it.
func exactMode(mode fs.FileMode) func(*os.File) error {
	if mode.Perm() == Default {
		return nil
	}
	return func(f *os.File) error { return setMode(f, mode) }
}

// WriteTemp writes data to a new temp file in the directory of name (named
// Prefix, name's base, cut when long, this process's id and a number),
// with mode (Default: 0666 less the umask), fsynced and closed, and
// returns the temp file's path. The caller renames it into place or
// removes it; on error nothing is left behind.
func WriteTemp(name string, data []byte, mode fs.FileMode) (string, error) {
	return writeTemp(name, data, createPerm(mode), exactMode(mode), true)
}

// writeTemp is WriteTemp for a file created with perm (less the umask)
// and then given fix, when not nil, with the fsync only when sync is true.
func writeTemp(name string, data []byte, perm fs.FileMode, fix func(*os.File) error, sync bool) (string, error) {
	// BASE-PID-NUMBER, as a Batch names its files: Leftovers tells a
	// dead process's from a running one's by the pid. Made with perm by
	// open(2) itself (os.CreateTemp would make it 0600), so that the
	// kernel applies the umask as it does to any new file.
	dir := filepath.Dir(name)
	for try := 0; ; try++ {
		tmp := filepath.Join(dir, tempName(filepath.Base(name)))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue // left by an earlier process of the same id
		}
		if err != nil {
			return "", err
		}
		if err := fill(f, data, fix, sync); err != nil {
			os.Remove(tmp)
			return "", err
		}
		return tmp, nil
	}
}

// fill writes data to the new temp file f, gives it fix when fix is not
// nil (its mode), fsyncs it when sync, and closes it; the first error is
// returned, and the caller removes the file then.
func fill(f *os.File, data []byte, fix func(*os.File) error, sync bool) error {
	_, err := f.Write(data)
	if err == nil && fix != nil {
		err = fix(f)
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
// replaced whatever it is (callers refuse symbolic links first). With mode
// Default a regular file at name keeps its mode (a page the user keeps
// 0600 stays 0600), and a new file gets 0666 less the umask; any other
// mode is the new file's exactly.
func Write(name string, data []byte, mode fs.FileMode) error {
	if mode.Perm() == Default {
		if fi, err := os.Lstat(name); err == nil && fi.Mode().IsRegular() {
			mode = fi.Mode().Perm()
		}
	}
	return writeVia(name, data, createPerm(mode), exactMode(mode), os.Rename)
}

// WriteFixed is Write for a file whose mode fix sets (gitperm's
// Shared.FixFile, for a file in a git directory): the new file is created
// with 0666 less the umask, as git creates its own files, then given fix
// before it takes name's place, whatever mode a file at name had.
func WriteFixed(name string, data []byte, fix func(*os.File) error) error {
	return writeVia(name, data, 0o666, fix, os.Rename)
}

// WriteNew creates name with data atomically as Write does, unless name
// exists: then it writes nothing and returns an error wrapping fs.ErrExist.
// On Linux the check and the creation are one step (RENAME_NOREPLACE), so a
// file that appears at name meanwhile is never replaced. mode is as
// WriteTemp's.
func WriteNew(name string, data []byte, mode fs.FileMode) error {
	return writeVia(name, data, createPerm(mode), exactMode(mode), renameNew)
}

// writeVia is Write and WriteNew: writeTemp, rename (which puts the temp
// file at name, or fails and leaves it to be removed), fsync of the
// directory.
func writeVia(name string, data []byte, perm fs.FileMode, fix func(*os.File) error, rename func(tmp, name string) error) error {
	tmp, err := writeTemp(name, data, perm, fix, true)
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

// Umask is this process's umask as the kernel shows it (the Umask line of
// /proc/self/status, Linux 4.7 on), read once; 022, the usual one, where
// it cannot be read. Read, never set: umask(2) changes it for every
// thread at once. For a mode Default cannot give, an executable's (0777
// less the umask, as git gives its hooks).
var Umask = sync.OnceValue(func() fs.FileMode {
	if m, err := umaskOf(); err == nil {
		return m
	}
	return 0o022
})

// errNoUmask: /proc/self/status has no Umask line, or cannot be read.
var errNoUmask = errors.New("no Umask line in /proc/self/status")

// umaskOf reads the Umask line of /proc/self/status: errNoUmask where there
// is none, another error where it is not an octal number.
func umaskOf() (fs.FileMode, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, errNoUmask
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return fs.FileMode(m) & fs.ModePerm, err
		}
	}
	return 0, errNoUmask
}
