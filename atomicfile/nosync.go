package atomicfile

import "os"

// WriteUnsynced replaces name with data as Write does (a temp file beside
// it, renamed over it: a reader never sees a mix, and nothing is left behind
// on error) but syncs nothing. It is for files whose loss costs nothing: a
// crash can leave the old content, the new, or an empty file, so the reader
// must treat an empty or unreadable file as absent. An fsync on an ordinary
// disk costs milliseconds, more than everything else a hook call does.
// The file is made as WriteFixed makes it: 0666 less the umask, then fix.
func WriteUnsynced(name string, data []byte, fix func(*os.File) error) error {
	tmp, err := writeTemp(name, data, 0o666, fix, false)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
