package odb

import (
	"bytes"
	"errors"
)

// maxCopy is the length of a copy instruction that names none.
const maxCopy = 0x10000

var errTruncatedDelta = errors.New("truncated delta")

// deltaVarint reads one size of a delta header: little-endian base-128, at
// most 63 bits.
func deltaVarint(delta []byte) (int64, []byte, error) {
	var v int64
	for shift := 0; ; shift += 7 {
		if len(delta) == 0 {
			return 0, nil, errTruncatedDelta
		}
		if shift > 56 {
			return 0, nil, errors.New("delta size too large")
		}
		c := delta[0]
		delta = delta[1:]
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, delta, nil
		}
	}
}

// deltaSizes reads the base and result sizes at the start of a delta.
func deltaSizes(delta []byte) (src, dst int64, rest []byte, err error) {
	if src, delta, err = deltaVarint(delta); err != nil {
		return 0, 0, nil, err
	}
	if dst, delta, err = deltaVarint(delta); err != nil {
		return 0, 0, nil, err
	}
	return src, dst, delta, nil
}

// ApplyDelta applies a git delta to base. Its instructions are checked in
// a first pass (every copy inside base, every insert inside the delta) and
// the result they produce must be the size the delta announces, so nothing
// is allocated beyond what the delta really makes.
func ApplyDelta(base, delta []byte) ([]byte, error) {
	return applyDeltaInto(base, delta, nil)
}

// applyDeltaInto is ApplyDelta into buf's storage when it fits; buf must
// not share storage with base or delta.
func applyDeltaInto(base, delta, buf []byte) ([]byte, error) {
	srcSize, dstSize, ops, err := deltaSizes(delta)
	if err != nil {
		return nil, err
	}
	if srcSize != int64(len(base)) {
		return nil, errors.New("delta base size mismatch")
	}
	n, err := runDelta(base, ops, nil)
	if err != nil {
		return nil, err
	}
	if int64(n) != dstSize {
		return nil, errors.New("delta result size mismatch")
	}
	out := sized(buf, int64(n))
	_, err = runDelta(base, ops, out)
	return out, err
}

// runDelta runs the instructions ops against base, writing the result to
// out when out is not nil, and returns the result's length.
func runDelta(base, ops, out []byte) (int, error) {
	pos := 0
	for len(ops) > 0 {
		op := ops[0]
		ops = ops[1:]
		switch {
		case op&0x80 != 0:
			// Bits 0-3 announce the offset's bytes, bits 4-6 the size's.
			var off, n int
			var err error
			if off, ops, err = copyArg(op&0x0f, 4, ops); err != nil {
				return 0, err
			}
			if n, ops, err = copyArg(op>>4&0x07, 3, ops); err != nil {
				return 0, err
			}
			if n == 0 {
				n = maxCopy
			}
			if off+n > len(base) {
				return 0, errors.New("delta copy out of range")
			}
			if out != nil {
				copy(out[pos:], base[off:off+n])
			}
			pos += n
		case op != 0:
			if int(op) > len(ops) {
				return 0, errTruncatedDelta
			}
			if out != nil {
				copy(out[pos:], ops[:op])
			}
			pos += int(op)
			ops = ops[op:]
		default:
			return 0, errors.New("delta opcode 0")
		}
	}
	return pos, nil
}

// copyArg reads a copy instruction's argument: up to width little-endian
// bytes, present where the bits of mask are set.
func copyArg(mask byte, width int, ops []byte) (int, []byte, error) {
	v := 0
	for i := 0; i < width; i++ {
		if mask&(1<<i) != 0 {
			if len(ops) == 0 {
				return 0, nil, errTruncatedDelta
			}
			v |= int(ops[0]) << (8 * i)
			ops = ops[1:]
		}
	}
	return v, ops, nil
}

// maxInsert is the most bytes one insert instruction carries.
const maxInsert = 0x7f

// EncodeDelta returns a git delta that makes target from base: a copy of
// their common prefix, the bytes between inserted, a copy of their common
// suffix. That is the whole difference between two versions of a tree that
// differ in one entry (the case of a batch of records, each changing one
// file), found in one pass and no index of base; for anything else it is
// still a correct delta, only not a small one. It returns nil when base is
// too large for a copy's 32-bit offset.
func EncodeDelta(base, target []byte) []byte {
	if int64(len(base)) >= 1<<32 {
		return nil
	}
	p := 0
	for p < len(base) && p < len(target) && base[p] == target[p] {
		p++
	}
	s := 0
	for s < len(base)-p && s < len(target)-p && base[len(base)-1-s] == target[len(target)-1-s] {
		s++
	}
	mid := target[p : len(target)-s]
	out := make([]byte, 0, 20+len(mid)+len(mid)/maxInsert+2*(p+s)/maxCopy*8)
	out = appendDeltaVarint(out, uint64(len(base)))
	out = appendDeltaVarint(out, uint64(len(target)))
	out = appendCopy(out, 0, p)
	for len(mid) > 0 {
		n := min(len(mid), maxInsert)
		out = append(out, byte(n))
		out = append(out, mid[:n]...)
		mid = mid[n:]
	}
	return appendCopy(out, len(base)-s, s)
}

// appendDeltaVarint appends one size of a delta header (deltaVarint).
func appendDeltaVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendCopy appends the copy instructions for base[off:off+n], at most
// maxCopy bytes each (the most a version-2 pack's readers take; git writes
// no longer copies): an instruction names only the non-zero bytes of its
// offset and size, and a size of maxCopy is written as none.
func appendCopy(b []byte, off, n int) []byte {
	for n > 0 {
		k := min(n, maxCopy)
		op := byte(0x80)
		var args [7]byte
		na := 0
		for i := 0; i < 4; i++ {
			if c := byte(off >> (8 * i)); c != 0 {
				op |= 1 << i
				args[na] = c
				na++
			}
		}
		if k != maxCopy {
			for i := 0; i < 3; i++ {
				if c := byte(k >> (8 * i)); c != 0 {
					op |= 1 << (4 + i)
					args[na] = c
					na++
				}
			}
		}
		b = append(append(b, op), args[:na]...)
		off += k
		n -= k
	}
	return b
}

// EncodeTreeDelta returns a git delta that makes tree target from tree
// base: walking both in their (git's) order, every entry of target that
// base holds too is copied from base (a run of them that follow each other
// in base as one copy), and the others are inserted. Two versions of a
// directory that differ in a few entries far apart (a rule set kept per
// commit, each differing from the last in some folders: attack20-f10 P1)
// share everything but those entries, where EncodeDelta's one middle
// insert takes most of the tree. Entries out of git's order are inserted,
// not found: the delta is correct for any input, only not small. When
// either side is not a tree's encoding it is EncodeDelta's delta; it
// returns nil when base is too large for a copy's 32-bit offset.
func EncodeTreeDelta(base, target []byte) []byte {
	if int64(len(base)) >= 1<<32 {
		return nil
	}
	bs, ok := treeSpans(base)
	ts, ok2 := treeSpans(target)
	if !ok || !ok2 {
		return EncodeDelta(base, target)
	}
	out := appendDeltaVarint(nil, uint64(len(base)))
	out = appendDeltaVarint(out, uint64(len(target)))
	copyOff, copyLen, insFrom := 0, 0, -1
	flushIns := func(to int) {
		for insFrom >= 0 && insFrom < to {
			n := min(to-insFrom, maxInsert)
			out = append(out, byte(n))
			out = append(out, target[insFrom:insFrom+n]...)
			insFrom += n
		}
		insFrom = -1
	}
	i := 0
	for _, t := range ts {
		te := target[t.start:t.end]
		for i < len(bs) && before(base, bs[i], target, t) {
			i++ // only in base
		}
		if i < len(bs) && bytes.Equal(base[bs[i].start:bs[i].end], te) {
			flushIns(t.start)
			if copyLen > 0 && copyOff+copyLen == bs[i].start {
				copyLen += len(te)
			} else {
				out = appendCopy(out, copyOff, copyLen)
				copyOff, copyLen = bs[i].start, len(te)
			}
			i++
			continue
		}
		out = appendCopy(out, copyOff, copyLen) // changed, or only in target
		copyLen = 0
		if insFrom < 0 {
			insFrom = t.start
		}
	}
	flushIns(len(target))
	return appendCopy(out, copyOff, copyLen)
}

// treeSpan is where one entry of an encoded tree ("mode name\0" and 20
// bytes of hash) starts and ends, and where its name does.
type treeSpan struct {
	start, name, nul, end int
	dir                   bool
}

// before reports whether entry x of tree a comes before entry y of tree b
// in git's order of tree entries (base_name_compare: a directory's name
// as if "/" followed it).
func before(a []byte, x treeSpan, b []byte, y treeSpan) bool {
	an, bn := a[x.name:x.nul], b[y.name:y.nul]
	n := min(len(an), len(bn))
	if c := bytes.Compare(an[:n], bn[:n]); c != 0 {
		return c < 0
	}
	next := func(name []byte, dir bool) byte {
		switch {
		case len(name) > n:
			return name[n]
		case dir:
			return '/'
		}
		return 0
	}
	return next(an, x.dir) < next(bn, y.dir)
}

// treeSpans returns the spans of an encoded tree's entries; ok is false
// when data is not one.
func treeSpans(data []byte) (spans []treeSpan, ok bool) {
	for p := 0; p < len(data); {
		nul := bytes.IndexByte(data[p:], 0)
		if nul < 0 || p+nul+1+20 > len(data) {
			return nil, false
		}
		sp := bytes.IndexByte(data[p:p+nul], ' ')
		if sp < 0 {
			return nil, false
		}
		spans = append(spans, treeSpan{start: p, name: p + sp + 1, nul: p + nul, end: p + nul + 1 + 20,
			dir: string(data[p:p+sp]) == "40000"})
		p += nul + 1 + 20
	}
	return spans, true
}
