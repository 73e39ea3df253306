package gitstore

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
)

// atChunk is how many records atFromFile reads at a time, from the end.
const atChunk = 2048

// atFromFile answers At from the index file without loading it: for a
// one-shot `strata show --at` on a long history, decoding every record and
// deriving the suffix minima costs more than the whole process may. It
// checks that the file's last record is the ref's head, scans records
// backwards from there in chunks until the first whose time is not after ts
// (the newest such commit, whatever the order of the times before it),
// checking each scanned record's CRC, and checks the commit it lands on as
// At does. Anything else — an index already in memory, a stale or damaged
// file, a time before every record — returns ok false and At takes its
// usual path, which rebuilds what needs rebuilding. Callers hold s.mu.
func (s *Store) atFromFile(ref string, ts int64) (string, bool) {
	if s.indexes[ref] != nil {
		return "", false
	}
	head, err := s.readRef(ref)
	if err != nil {
		return "", false
	}
	f, err := os.Open(s.indexFile(ref))
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < idxHeader+idxRecSize || (fi.Size()-idxHeader)%idxRecSize != 0 {
		return "", false
	}
	var hdr [idxHeader]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil || string(hdr[:8]) != idxMagic ||
		binary.BigEndian.Uint32(hdr[8:]) != idxVersion || binary.BigEndian.Uint32(hdr[12:]) != idxRecSize {
		return "", false
	}
	n := (fi.Size() - idxHeader) / idxRecSize
	buf := make([]byte, atChunk*idxRecSize)
	for end := n; end > 0; {
		start := max(end-atChunk, 0)
		b := buf[:(end-start)*idxRecSize]
		if _, err := f.ReadAt(b, idxHeader+start*idxRecSize); err != nil && err != io.EOF {
			return "", false
		}
		for i := end - start - 1; i >= 0; i-- {
			r := b[i*idxRecSize : (i+1)*idxRecSize]
			if recCRC(r) != binary.BigEndian.Uint32(r[36:]) {
				return "", false
			}
			if end == n && i == end-start-1 && !bytes.Equal(r[16:36], head[:]) {
				return "", false // the file lags the ref: At catches it up
			}
			t := int64(binary.BigEndian.Uint64(r))
			if t > ts {
				continue
			}
			var h plumbing.Hash
			copy(h[:], r[16:36])
			ci, err := s.readCommit(h)
			if err != nil || ci.time != t {
				return "", false
			}
			return h.String(), true
		}
		end = start
	}
	return "", false
}
