package odb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// looseHeaderMax is the longest loose-object header: "commit", a space, 19
// digits and the NUL.
const looseHeaderMax = 32

var errLooseHeader = errors.New("corrupt loose object header")

// openLoose opens the loose file of h and returns a zlib reader of it and
// the file's size; a missing file is ErrNotFound.
func (db *DB) openLoose(h plumbing.Hash) (*os.File, int64, error) {
	hex := h.String()
	f, err := os.Open(filepath.Join(db.dir, hex[:2], hex[2:]))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// looseHeader inflates the head of a loose object and parses its
// "<type> <size>\x00" header. It returns the bytes of content inflated with
// the header.
func looseHeader(z io.Reader, fileSize int64) (plumbing.ObjectType, int64, []byte, error) {
	var buf [looseHeaderMax]byte
	n, err := io.ReadFull(z, buf[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, 0, nil, err
	}
	t, size, rest, err := parseLooseHeader(buf[:n])
	if err != nil {
		return 0, 0, nil, err
	}
	if !fits(size, fileSize) {
		return 0, 0, nil, errors.New("loose object size larger than its file can hold")
	}
	if int64(len(rest)) > size {
		return 0, 0, nil, errors.New("loose object longer than its header says")
	}
	return t, size, rest, nil
}

func parseLooseHeader(b []byte) (plumbing.ObjectType, int64, []byte, error) {
	nul := bytes.IndexByte(b, 0)
	if nul < 0 {
		return 0, 0, nil, errLooseHeader
	}
	typ, num, ok := bytes.Cut(b[:nul], []byte{' '})
	if !ok || len(num) == 0 || len(num) > 18 || (num[0] == '0' && len(num) > 1) {
		return 0, 0, nil, errLooseHeader
	}
	var size int64
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, 0, nil, errLooseHeader
		}
		size = size*10 + int64(c-'0')
	}
	var t plumbing.ObjectType
	switch string(typ) {
	case "commit":
		t = plumbing.CommitObject
	case "tree":
		t = plumbing.TreeObject
	case "blob":
		t = plumbing.BlobObject
	case "tag":
		t = plumbing.TagObject
	default:
		return 0, 0, nil, fmt.Errorf("loose object type %q", typ)
	}
	return t, size, b[nul+1:], nil
}

func (db *DB) readLoose(h plumbing.Hash, limit int64) (plumbing.ObjectType, []byte, error) {
	f, fileSize, err := db.openLoose(h)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	z, err := inflater(bufio.NewReader(f))
	if err != nil {
		return 0, nil, err
	}
	defer zReaders.Put(z)
	t, size, rest, err := looseHeader(z, fileSize)
	if err != nil {
		return 0, nil, err
	}
	if limit >= 0 && size > limit {
		return 0, nil, &TooLargeError{Size: size, Limit: limit}
	}
	data := make([]byte, size)
	n := copy(data, rest)
	if _, err := io.ReadFull(z, data[n:]); err != nil {
		return 0, nil, fmt.Errorf("inflate: %w", err)
	}
	// The stream must end here: this read also checks zlib's checksum.
	var one [1]byte
	if _, err := io.ReadFull(z, one[:]); err != io.EOF {
		return 0, nil, errors.New("loose object longer than its header says")
	}
	return t, data, nil
}

func (db *DB) statLoose(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	f, fileSize, err := db.openLoose(h)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	z, err := inflater(f)
	if err != nil {
		return 0, 0, err
	}
	defer zReaders.Put(z)
	t, size, _, err := looseHeader(z, fileSize)
	return t, size, err
}
