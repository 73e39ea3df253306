package odb

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// EncodeDelta's deltas apply back to their targets, across copies longer
// than one instruction carries, offsets with zero bytes inside, inserts
// longer than one instruction carries, and empty sides.
func TestEncodeDelta(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	blob := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(4)) // few symbols: long accidental matches
		}
		return b
	}
	big := blob(3*maxCopy + 1000)
	cases := map[string][2][]byte{
		"empty both":      {nil, nil},
		"empty base":      {nil, []byte("new")},
		"empty target":    {[]byte("old"), nil},
		"same":            {big, big},
		"one byte":        {big, append(append(append([]byte{}, big[:maxCopy]...), 'x'), big[maxCopy+1:]...)},
		"prefix longer":   {big[:maxCopy+5], big},
		"suffix only":     {big[100:], big},
		"insert > 127":    {[]byte("ab"), append(append([]byte("a"), blob(1000)...), 'b')},
		"nothing common":  {[]byte("abc"), []byte("xyz")},
		"target in base":  {big, big[maxCopy : 2*maxCopy+7]},
		"overlap":         {[]byte("aaaa"), []byte("aaaaaa")},
		"shorter overlap": {[]byte("aaaaaa"), []byte("aaaa")},
	}
	for i := 0; i < 200; i++ {
		base := blob(rng.IntN(3 * maxCopy))
		target := append([]byte{}, base...)
		for k := rng.IntN(4); k > 0 && len(target) > 0; k-- {
			at := rng.IntN(len(target))
			target = append(target[:at], append(blob(rng.IntN(300)), target[at+rng.IntN(len(target)-at):]...)...)
		}
		cases["random "+string(rune('a'+i%26))+string(rune('a'+i/26))] = [2][]byte{base, target}
	}
	for name, c := range cases {
		d := EncodeDelta(c[0], c[1])
		got, err := ApplyDelta(c[0], d)
		if err != nil || !bytes.Equal(got, c[1]) {
			t.Fatalf("%s: applies to %d bytes (%v), want %d", name, len(got), err, len(c[1]))
		}
	}
	// One entry changed in a tree of 2 000: the delta is the new entry
	// and a few instructions.
	if d := EncodeDelta(big, cases["one byte"][1]); len(d) > 32 {
		t.Fatalf("a one-byte change takes a %d-byte delta", len(d))
	}
}

func FuzzEncodeDelta(f *testing.F) {
	f.Add([]byte("tree a\x00b"), []byte("tree a\x00c"))
	f.Add(bytes.Repeat([]byte{0}, maxCopy+3), bytes.Repeat([]byte{0}, 2*maxCopy))
	f.Add([]byte{}, []byte("x"))
	f.Fuzz(func(t *testing.T, base, target []byte) {
		got, err := ApplyDelta(base, EncodeDelta(base, target))
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("delta of %d bytes from %d applies to %d (%v)", len(target), len(base), len(got), err)
		}
	})
}
