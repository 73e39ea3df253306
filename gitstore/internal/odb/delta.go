package odb

import "errors"

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
	out := make([]byte, n)
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
