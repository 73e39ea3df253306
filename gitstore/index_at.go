package gitstore

import (
	"bytes"
	"encoding/binary"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// atChunk is how many records atFromFile reads at a time when it scans.
const atChunk = 2048

// atFromFile answers At from the index file without loading it: for a
// one-shot `strata show --at` on a long history, decoding every record and
// deriving the suffix minima costs more than the whole process may. It
// checks that the file's last record is the ref's head. That record's inv
// names the newest time inversion of the chain: every record after it is in
// time order and not before anything older, so when the answer lies there
// it is found by binary search (about 17 reads of one record for 100 000
// commits); otherwise the records before the inversion are scanned
// backwards in chunks down to the first whose time is not after ts (the
// newest such commit, whatever the order of the times). Every record read
// has its CRC checked, and the commit it lands on must have the indexed
// time, as At checks. Anything else — an index already in memory, a stale
// or damaged file, a time before every record — returns ok false and At
// takes its usual path, which rebuilds what needs rebuilding. Callers hold
// s.mu.
func (s *Store) atFromFile(ref string, ts int64) (string, bool) {
	if s.indexes[ref] != nil {
		return "", false
	}
	head, err := s.readRef(ref)
	if err != nil {
		return "", false
	}
	f, err := openRegular(s.indexFile(ref))
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
	rec := make([]byte, idxRecSize)
	read := func(i int64) (int64, bool) { // record i's time
		if _, err := f.ReadAt(rec, idxHeader+i*idxRecSize); err != nil && err != io.EOF || !recOKOne(rec) {
			return 0, false
		}
		return int64(binary.BigEndian.Uint64(rec)), true
	}
	if _, ok := read(n - 1); !ok || !bytes.Equal(rec[16:36], head[:]) {
		return "", false // damaged, or the file lags the ref: At catches it up
	}
	// [from, n) is in time order and each of its records is not before any
	// older one.
	from := int64(binary.BigEndian.Uint32(rec[36:]))
	if from > n {
		return "", false
	}
	if from < n {
		t, ok := read(from)
		if !ok {
			return "", false
		}
		if t <= ts {
			// The answer is the last record of [from, n) not after ts.
			lo, hi := from, n // time(lo) <= ts; time(hi) > ts, or hi == n
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				t, ok := read(mid)
				if !ok {
					return "", false
				}
				if t <= ts {
					lo = mid
				} else {
					hi = mid
				}
			}
			if _, ok := read(lo); !ok {
				return "", false
			}
			return s.atCommit(rec, ts)
		}
	}
	// Every record from `from` on is after ts: scan what comes before it.
	buf := make([]byte, atChunk*idxRecSize)
	for end := from; end > 0; {
		start := max(end-atChunk, 0)
		b := buf[:(end-start)*idxRecSize]
		if _, err := f.ReadAt(b, idxHeader+start*idxRecSize); err != nil && err != io.EOF {
			return "", false
		}
		for i := end - start - 1; i >= 0; i-- {
			r := b[i*idxRecSize : (i+1)*idxRecSize]
			if !recOKOne(r) {
				return "", false
			}
			if int64(binary.BigEndian.Uint64(r)) <= ts {
				return s.atCommit(r, ts)
			}
		}
		end = start
	}
	return "", false
}

// atCommit returns the commit of record r (its CRC checked) when that
// commit has the record's time, which is not after ts.
func (s *Store) atCommit(r []byte, ts int64) (string, bool) {
	t := int64(binary.BigEndian.Uint64(r))
	if t > ts {
		return "", false
	}
	var h plumbing.Hash
	copy(h[:], r[16:36])
	ci, err := s.readCommit(h)
	if err != nil || ci.time != t {
		return "", false
	}
	return h.String(), true
}
