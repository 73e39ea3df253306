package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// WriteUnsynced replaces name with data as Write does (a temp file beside
// it, renamed over it: a reader never sees a mix, and nothing is left behind
// on error) but syncs nothing. It is for files whose loss costs nothing: a
// crash can leave the old content, the new, or an empty file, so the reader
// must treat an empty or unreadable file as absent. An fsync on an ordinary
// disk costs milliseconds, more than everything else a hook call does.
func WriteUnsynced(name string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(name), Prefix+filepath.Base(name)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
