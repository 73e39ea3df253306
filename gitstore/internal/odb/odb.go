// Package odb is gitstore's own reader and writer of git objects: loose
// objects, version-2 pack indexes (with their large-offset table) and
// version-1 ones, packs, offset and ref deltas, alternates, the tree and
// commit encodings, and loose objects written with O_TMPFILE where Linux
// offers it. It is kept apart from gitstore so that each parser can be
// fuzzed and checked against git on its own. It uses go-git's plumbing
// value types (Hash, ObjectType, FileMode) and nothing of go-git's storage:
// it is strata's only reader of objects.
//
// Every size read from a header (a loose object's, a pack entry's, a
// delta's, an index's object count) is checked against the bytes that can
// hold it before anything is allocated, so a hostile object directory costs
// at most memory in proportion to its size on disk. Sizes can be learnt
// from headers alone (Stat) and reads refused over a limit before the
// content is inflated (ReadLimit).
//
// A DB is not safe for concurrent use: gitstore serialises it under its
// mutex.
package odb

import (
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/gitperm"
)

// ErrNotFound means the object is neither loose nor in a readable pack, of
// this objects directory or of its alternates.
var ErrNotFound = errors.New("object not in the object database")

// TooLargeError is ReadLimit's answer for an object over the limit, learnt
// from the object's headers: nothing of its content was inflated.
type TooLargeError struct {
	Hash  plumbing.Hash
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("object %s is %d bytes, larger than the limit of %d", e.Hash, e.Size, e.Limit)
}

// maxDeltaDepth bounds a delta chain (git's own default is 50; a pack made
// with --depth=4095 is the deepest git writes).
const maxDeltaDepth = 10000

// DB reads and writes the objects of one objects directory; it also reads
// those of the directories its info/alternates file names (alternates.go).
type DB struct {
	dir       string // <commondir>/objects
	alts      []*DB  // the alternates' DBs (alternates.go), once altsRead
	altsRead  bool
	env       string // $GIT_ALTERNATE_OBJECT_DIRECTORIES (SetEnvAlternates)
	envBase   string // the directory its relative entries are taken from
	root      *DB    // for an alternate's DB, the DB whose alternates it is
	packs     []*pack
	seen      map[string]bool
	rescans   int                 // how many times the pack folder was listed, for the tests
	bases     map[baseKey]baseObj // resolved delta bases, bounded by baseBytes
	baseFree  [][]byte            // buffers of bases the cache dropped, for the next ones
	deltaBufs [][]byte            // by depth in a chain, the buffer of the last delta read (deltaBuf)
	bytes     int                 // the capacity of the bases' buffers
	batch     *batch              // objects written since Begin (packwrite.go)
	// Shared is the repository's core.sharedRepository, asked for when a
	// file is about to be created (nil: "umask").
	Shared func() gitperm.Shared
	// Refuse, when not nil, is what Write and Flush return instead of
	// creating anything (a repository strata must not write in).
	Refuse error
}

// shared is the setting new files and directories get their modes from.
func (db *DB) shared() gitperm.Shared {
	if db.Shared == nil {
		return gitperm.Umask
	}
	return db.Shared()
}

type baseKey struct {
	pack *pack
	off  int64
}

type baseObj struct {
	typ  plumbing.ObjectType
	data []byte
}

// baseBytes bounds the delta-base cache: the capacity of the buffers it
// holds (a single base larger than it is still held, alone).
var baseBytes = 16 << 20 // a var for the tests

// Open returns a DB for the objects directory dir. Nothing is opened until
// the first read.
func Open(dir string) *DB {
	return &DB{dir: dir, seen: map[string]bool{}, bases: map[baseKey]baseObj{}}
}

// Dir returns the objects directory.
func (db *DB) Dir() string { return db.dir }

// rescan opens packs that appeared since the last scan. Packs that git
// repacked away stay readable through their open descriptors.
func (db *DB) rescan() {
	db.rescans++
	if db.packs == nil {
		// scanned, even when there is no pack: a repository of loose
		// objects only listed its pack folder at every lookup (find)
		db.packs = []*pack{}
	}
	names, _ := filepath.Glob(filepath.Join(db.dir, "pack", "pack-*.idx"))
	for _, idxName := range names {
		if db.seen[idxName] {
			continue
		}
		p, err := openPack(idxName)
		if err != nil {
			continue // unreadable: its objects are not found
		}
		db.seen[idxName] = true
		db.packs = append(db.packs, p)
	}
	// Newest packs first: recently written objects are looked up most.
	sort.SliceStable(db.packs, func(i, j int) bool { return db.packs[i].name > db.packs[j].name })
}

// Read returns the type and content of object h, or an error wrapping
// ErrNotFound.
func (db *DB) Read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return db.read(h, -1, 0, nil)
}

// ReadLimit is Read for an object of at most limit bytes: a larger one is
// refused with a *TooLargeError before its content is inflated.
func (db *DB) ReadLimit(h plumbing.Hash, limit int64) (plumbing.ObjectType, []byte, error) {
	return db.read(h, limit, 0, nil)
}

// ReadLimitInto is ReadLimit that puts a packed object's content in buf's
// storage when it fits (the result then shares it): a caller reading
// thousands of objects of one size in turn, and done with each before the
// next, reuses a few buffers instead of touching fresh memory for each
// (the page faults of 1 000 fetched trees of 45 KB cost a sync more than
// their deltas).
func (db *DB) ReadLimitInto(h plumbing.Hash, limit int64, buf []byte) (plumbing.ObjectType, []byte, error) {
	return db.read(h, limit, 0, buf)
}

// Stat returns the type and size of object h from its headers alone: a
// loose object's zlib header, a pack entry's header, and for a delta the
// result size at the head of the delta and the type at the end of its
// chain. It returns an error wrapping ErrNotFound like Read.
func (db *DB) Stat(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	return db.stat(h, 0)
}

// find calls f with the first pack holding h, or with p == nil for a loose
// object; found is false when neither has it. The packs are searched first:
// once a pack's name table is in memory a miss costs no system call, while a
// loose miss costs a failed open. A miss everywhere rescans the packs (a git
// gc may have packed the object since) and looks once more.
func (db *DB) find(h plumbing.Hash, depth int, f func(p *pack, off int64) error) error {
	if depth > maxDeltaDepth {
		return errors.New("delta chain too long")
	}
	if db.packs == nil {
		db.rescan()
	}
	var last error
	for try := 0; try < 2; try++ {
		for _, p := range db.packs {
			off, ok, err := p.lookup(h)
			if err != nil || !ok {
				continue
			}
			if err := f(p, off); err == nil || isTooLarge(err) {
				return err
			} else {
				last = err
			}
		}
		if try == 0 {
			err := f(nil, 0)
			if err == nil || isTooLarge(err) {
				return err
			}
			if !errors.Is(err, ErrNotFound) {
				last = err
			}
			db.rescan()
		}
	}
	if last != nil {
		return fmt.Errorf("%w: %v", ErrNotFound, last)
	}
	return ErrNotFound
}

func isTooLarge(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

func (db *DB) read(h plumbing.Hash, limit int64, depth int, into []byte) (t plumbing.ObjectType, data []byte, err error) {
	if i, ok := db.batch.index(h); ok {
		o := db.batch.objs[i]
		if limit >= 0 && int64(o.size) > limit {
			return 0, nil, &TooLargeError{Hash: h, Size: int64(o.size), Limit: limit}
		}
		data, err := db.batch.content(i)
		return o.t, data, err
	}
	err = db.find(h, depth, func(p *pack, off int64) (err error) {
		if p == nil {
			t, data, err = db.readLoose(h, limit)
		} else {
			defer guard(&err)()
			t, data, err = db.readPacked(p, off, limit, depth, into)
		}
		var tl *TooLargeError
		if errors.As(err, &tl) {
			tl.Hash = h
		}
		return err
	})
	if errors.Is(err, ErrNotFound) {
		for _, a := range db.alternates() {
			if at, adata, aerr := a.read(h, limit, depth, into); !errors.Is(aerr, ErrNotFound) {
				return at, adata, aerr
			}
		}
	}
	return t, data, err
}

func (db *DB) stat(h plumbing.Hash, depth int) (t plumbing.ObjectType, size int64, err error) {
	if i, ok := db.batch.index(h); ok {
		o := db.batch.objs[i]
		return o.t, int64(o.size), nil
	}
	err = db.find(h, depth, func(p *pack, off int64) (err error) {
		if p == nil {
			t, size, err = db.statLoose(h)
		} else {
			defer guard(&err)()
			t, size, err = db.statPacked(p, off, depth)
		}
		return err
	})
	if errors.Is(err, ErrNotFound) {
		for _, a := range db.alternates() {
			if at, asize, aerr := a.stat(h, depth); !errors.Is(aerr, ErrNotFound) {
				return at, asize, aerr
			}
		}
	}
	return t, size, err
}

// Close releases the open pack files; the DB may be used again afterwards
// (it reopens them). Close is idempotent.
func (db *DB) Close() {
	for _, p := range db.packs {
		p.close()
	}
	for _, a := range db.alts {
		a.Close()
	}
	db.alts, db.altsRead = nil, false
	db.packs = nil
	db.seen = map[string]bool{}
	clear(db.bases)
	db.bytes = 0
}

// maxRatio bounds how much zlib data can inflate: deflate's largest
// expansion is 1032 to 1; a little more leaves room for the stream's own
// header and checksum.
const maxRatio = 1040

// fits reports whether size bytes can come out of avail bytes of zlib data.
func fits(size, avail int64) bool {
	if size < 0 {
		return false
	}
	if avail > (1<<62)/maxRatio {
		return true
	}
	return size <= avail*maxRatio+64
}

// guard turns a memory fault while reading a mapped pack (its file cut
// short under the mapping by another program) into an error in *err, where
// the Go runtime would end the process: defer guard(&err)().
func guard(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			*err = fmt.Errorf("pack data unreadable (file changed under its mapping): %v", r)
		}
	}
}

var zReaders sync.Pool

// inflater returns a pooled zlib reader of src; put it back with
// zReaders.Put when done.
func inflater(src io.Reader) (io.ReadCloser, error) {
	if v := zReaders.Get(); v != nil {
		z := v.(io.ReadCloser)
		if err := z.(zlib.Resetter).Reset(src, nil); err != nil {
			zReaders.Put(z)
			return nil, err
		}
		return z, nil
	}
	return zlib.NewReader(src)
}

// sized returns buf's storage cut to n bytes when it holds them, else new
// storage.
func sized(buf []byte, n int64) []byte {
	if int64(cap(buf)) >= n {
		return buf[:n]
	}
	return make([]byte, n)
}

// inflate reads exactly n bytes of zlib data from src.
func inflate(src io.Reader, n int64) ([]byte, error) {
	return inflateInto(src, n, nil)
}

// inflateInto is inflate into buf's storage when it fits.
func inflateInto(src io.Reader, n int64, buf []byte) ([]byte, error) {
	z, err := inflater(src)
	if err != nil {
		return nil, err
	}
	defer zReaders.Put(z)
	data := sized(buf, n)
	if _, err := io.ReadFull(z, data); err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	return data, nil
}
