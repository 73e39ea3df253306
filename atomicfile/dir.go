package atomicfile

import (
	"errors"
	"os"
	"sync"
)

// dirState is what a Batch knows of a directory it writes in.
type dirState struct {
	checked bool  // judged again at Commit
	bad     error // refused then: its files are not written
	used    bool  // a file was put in it since its last fsync: fsynced at the end

	// writes counts the temp files a writer goroutine is making here (a
	// batch made durable by syncfs): the directory is closed (Batch.spare)
	// only once they are made.
	writes sync.WaitGroup
}

var (
	errDirMoved = errors.New("directory replaced or moved since it was checked")
	errNotDir   = errors.New("not a directory")
)

// judge has ok, when set, judge where d really is.
func (d *dir) judge(ok func(dir, real string) error) error {
	if ok == nil {
		return nil
	}
	real, err := d.realPath()
	if err != nil {
		return err
	}
	return ok(d.path, real)
}

// recheck is Commit's check of d, before it puts the first file there: d
// is still where ok allows, and its path still names d (not a symbolic
// link or another directory put in its place since Add).
func (d *dir) recheck(ok func(dir, real string) error) error {
	if err := d.judge(ok); err != nil {
		return err
	}
	if !d.isAt(d.path) {
		return &os.PathError{Op: "open", Path: d.path, Err: errDirMoved}
	}
	return nil
}
