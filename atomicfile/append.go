package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// An outside writer that opened a file before strata replaced it (a shell's
// `>>`, Node's fs.appendFile, an editor saving in place) writes into the
// file replaced, which no name reaches any more: its bytes are lost,
// whatever strata looks at before or after (attack23-verify 3). A new
// version that only adds bytes at the end of the file is therefore written
// in place instead, by Append: one write(2) in O_APPEND mode, which the
// kernel orders with every other O_APPEND write to the same file, so no
// writer's bytes are lost, strata's or another's.

// ErrNoAppend is Append's answer where a file cannot be appended to in
// place as it requires (not Linux): the caller replaces the file instead.
var ErrNoAppend = errors.New("no append in place here")

// Append adds tail at the end of the regular file name, in place, in one
// write(2) on a descriptor opened with O_APPEND (never following a
// symbolic link, never blocking on a pipe), then fsyncs it. The directory
// is opened once, judged by dirOK as a Batch's (nil: not judged; its error
// is Append's), and the file opened in it. same, asked with the file open
// (readable, its offset at 0) and its fstat, tells whether it is still the
// file and content the caller computed the new version from; false, a file
// that is not regular, has other hard links (an append would change them
// too) or is no longer at name, and a file replaced at name before the
// write was made (the bytes then went to the file replaced) all return
// false and no error: nothing was added to the file at name. Bytes another
// writer appends between same's check and the write come before tail.
//
// A write that fails (a full disk: the kernel has often written part of
// tail by then), or whose fsync fails, is undone: what it added is cut off
// again, so the file holds exactly the bytes it held before (an
// *AppendError; Left 0). Only a crash in the middle of the write can leave
// the first part of tail at the end of the file; what was there before is
// never touched.
func Append(name string, tail []byte, dirOK func(dir, real string) error, same func(f *os.File, fi fs.FileInfo) bool) (bool, error) {
	d, err := openDir(filepath.Dir(name))
	if err != nil {
		return false, err
	}
	defer d.close()
	if err := d.judge(dirOK); err != nil {
		return false, err
	}
	base := filepath.Base(name)
	f, err := d.openAppend(base)
	switch {
	case errors.Is(err, ErrNoAppend):
		return false, err
	case err != nil && (errors.Is(err, fs.ErrNotExist) || isLoop(err)):
		return false, nil // removed, or a symbolic link put there, meanwhile
	case err != nil:
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() || links(fi) != 1 || !same(f, fi) {
		return false, nil
	}
	if AppendStep != nil {
		AppendStep("checked", name)
	}
	n, err := appendWrite(f, tail)
	if err == nil {
		if err = f.Sync(); err != nil {
			n = len(tail) // written, but perhaps never to reach the disk
		}
	}
	if err != nil {
		return false, cutBack(f, tail[:n], err)
	}
	if now := d.stat(base); now == nil || !SameFile(now, fi) {
		return false, nil // replaced by a rename before the write: the bytes went with it
	}
	return true, nil
}

// Links is fi's hard link count (1 where the system does not say).
func Links(fi fs.FileInfo) uint64 { return links(fi) }

// AppendStep, set by tests only (also other packages'), is called with
// "checked" and the file's name once Append has checked the file it opened,
// right before it writes.
var AppendStep func(step, name string)

// appendWrite is Append's write of tail; tests replace it to fail part way.
var appendWrite = (*os.File).Write

// An AppendError is Append's failed write: Err, the system's error (no
// space left on device); Left, how many bytes of the new text stay where
// the file ended before (another writer may have appended after them)
// because cutting them off failed or was not safe (Cut says why),
// 0 when the file is as it was.
type AppendError struct {
	Err  error
	Left int
	Cut  error
}

func (e *AppendError) Error() string {
	if e.Left == 0 {
		return e.Err.Error() + "; nothing added, the file is as it was"
	}
	return fmt.Sprintf("%v; the first %d bytes of the new text stay in the file where it ended before, not cut off (%v)", e.Err, e.Left, e.Cut)
}

func (e *AppendError) Unwrap() error { return e.Err }

// cutBack undoes an append to f that failed with cause after written (a
// first part of the new text) reached the file: written is cut off its end
// again, when the end is still written (a writer appending after it
// leaves it in place, with its own line). The error is an *AppendError.
func cutBack(f *os.File, written []byte, cause error) error {
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err // the caller names the file
	}
	e := &AppendError{Err: cause}
	if len(written) == 0 {
		return e
	}
	fi, err := f.Stat()
	if err == nil {
		start := fi.Size() - int64(len(written))
		got := make([]byte, len(written))
		switch {
		case start < 0:
			err = errors.New("the file is shorter than what was written")
		default:
			if _, err = f.ReadAt(got, start); err == nil && !bytes.Equal(got, written) {
				err = errors.New("another writer appended after it")
			}
		}
		if err == nil {
			err = f.Truncate(start)
		}
		if err == nil {
			_ = f.Sync() // best effort: the truncation is what frees the space
		}
	}
	if err != nil {
		e.Left, e.Cut = len(written), err
	}
	return e
}
