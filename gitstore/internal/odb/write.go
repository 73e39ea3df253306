package odb

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitperm"
)

var (
	tmpSeq  atomic.Uint64
	bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	// One pool per compression level; see deflateObject.
	zStored = sync.Pool{New: func() any { w, _ := zlib.NewWriterLevel(nil, zlib.NoCompression); return w }}
	zBest   = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}
)

// storeLimit is the size under which loose objects are stored without
// compression: a loose object takes at least one file-system block, so
// compressing a small one saves no disk and costs a third of Record's CPU.
// git reads both forms; git gc recompresses everything it packs.
const storeLimit = 4096

// deflateObject writes the loose-object encoding of an object to buf: zlib
// of "<type> <size>\x00" followed by the content.
func deflateObject(buf *bytes.Buffer, t plumbing.ObjectType, data []byte) error {
	pool := &zBest
	if len(data) < storeLimit {
		pool = &zStored
	}
	z := pool.Get().(*zlib.Writer)
	defer pool.Put(z)
	z.Reset(buf)
	hdr := make([]byte, 0, looseHeaderMax)
	hdr = append(hdr, t.Bytes()...)
	hdr = append(hdr, ' ')
	hdr = strconv.AppendInt(hdr, int64(len(data)), 10)
	hdr = append(hdr, 0)
	if _, err := z.Write(hdr); err != nil {
		return err
	}
	if _, err := z.Write(data); err != nil {
		return err
	}
	return z.Close()
}

// Write stores data as a loose object of type t whose hash the caller
// computed as h (plumbing.ComputeHash). An object already present as a
// loose file is not written again. A reader never sees a partial object
// (see CreateFile); with fsync the object reaches the disk before Write
// returns. Write is idempotent.
//
// Between Begin and Flush the object is kept in the batch instead; data
// must then not be modified until Flush.
func (db *DB) Write(t plumbing.ObjectType, data []byte, h plumbing.Hash, fsync bool) error {
	if db.batch != nil {
		db.batch.add(t, data, h)
		return nil
	}
	hex := h.String()
	final := filepath.Join(db.dir, hex[:2], hex[2:])
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	if db.Refuse != nil {
		return fmt.Errorf("write object: %w", db.Refuse)
	}
	// Compress into memory first so the object reaches the file in one
	// write: on slow file systems every syscall on a new inode counts.
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	if err := deflateObject(buf, t, data); err != nil {
		return fmt.Errorf("write object: %w", err)
	}
	if err := CreateFile(final, buf.Bytes(), gitperm.Object, db.shared(), fsync); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("write object: %w", err)
	}
	return nil
}

// CreateFile creates path holding data, atomically: a reader sees no file
// or the whole file. os.ErrExist means path already exists (for an object:
// another writer stored the same object). Missing parents are created. The
// file, and each directory made for it, gets the mode git would give it
// (perm less the umask, then sh applied) before it gets its name. With
// fsync the data reaches the disk before the file gets its name.
func CreateFile(path string, data []byte, perm os.FileMode, sh gitperm.Shared, fsync bool) error {
	if ok, err := createFileTmpfile(path, data, perm, sh, fsync); ok {
		return err
	}
	if _, err := os.Lstat(path); err == nil {
		return os.ErrExist
	}
	tmp := filepath.Join(filepath.Dir(path), "tmp_obj_strata_"+strconv.Itoa(os.Getpid())+"_"+strconv.FormatUint(tmpSeq.Add(1), 10))
	f, err := CreateExcl(tmp, perm, sh)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && fsync {
		err = f.Sync()
	}
	if ferr := f.Close(); err == nil {
		err = ferr
	}
	if err == nil {
		err = syscallRename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// syscallRename renames without os.Rename's extra Lstat of the target.
func syscallRename(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// CreateExcl creates path with O_EXCL, creating its parent directories. git
// removes directories it empties (git pack-refs after pruning loose refs, git
// prune after removing loose objects), so a parent can vanish between the
// mkdir and the create: that race is retried, as git's own
// raceproof_create_file does. The file and the directories made for it get
// the modes git would give them (perm or gitperm.Dir less the umask, then
// sh applied).
func CreateExcl(path string, perm os.FileMode, sh gitperm.Shared) (*os.File, error) {
	if f, ok, err := createExclTmpfile(path, perm, sh); ok {
		return f, err
	}
	var err error
	for try := 0; try < 100; try++ {
		var f *os.File
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			if err := sh.FixFile(f); err != nil {
				f.Close()
				os.Remove(path)
				return nil, err
			}
			return f, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if merr := sh.MkdirAll(filepath.Dir(path)); merr != nil && !errors.Is(merr, os.ErrNotExist) {
			return nil, merr
		}
	}
	return nil, err
}
