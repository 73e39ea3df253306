package odb

import "errors"

// maxCopy is the most one delta instruction can produce: a copy of 0x10000
// bytes takes one byte of delta, an insert of n bytes takes n+1.
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

// ApplyDelta applies a git delta to base. The result size the delta
// announces is checked against what its instructions can produce before
// anything is allocated, and no instruction may write past it.
func ApplyDelta(base, delta []byte) ([]byte, error) {
	srcSize, dstSize, delta, err := deltaSizes(delta)
	if err != nil {
		return nil, err
	}
	if srcSize != int64(len(base)) {
		return nil, errors.New("delta base size mismatch")
	}
	if dstSize > int64(len(delta))*maxCopy {
		return nil, errors.New("delta result size larger than its instructions can produce")
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n int
			for i := 0; i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errTruncatedDelta
					}
					off |= int(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := 0; i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errTruncatedDelta
					}
					n |= int(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = maxCopy
			}
			if off+n > len(base) {
				return nil, errors.New("delta copy out of range")
			}
			if int64(len(out)+n) > dstSize {
				return nil, errors.New("delta result larger than announced")
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			if int(op) > len(delta) {
				return nil, errTruncatedDelta
			}
			if int64(len(out)+int(op)) > dstSize {
				return nil, errors.New("delta result larger than announced")
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, errors.New("delta opcode 0")
		}
	}
	if int64(len(out)) != dstSize {
		return nil, errors.New("delta result size mismatch")
	}
	return out, nil
}
