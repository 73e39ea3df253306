package odb

import (
	"bytes"
	"fmt"
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

// EncodeTreeDelta's deltas apply back to their targets: trees with entries
// changed, added, removed and moved, equal entries twice, runs longer than
// one copy carries, and (falling back to EncodeDelta) what is not a tree.
// Three entries changed far apart in a tree of 2 000 take a delta of about
// their size, where EncodeDelta's takes most of the tree.
func TestEncodeTreeDelta(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	entry := func(name string) []byte {
		h := make([]byte, 20)
		for i := range h {
			h[i] = byte(rng.IntN(256))
		}
		return append([]byte("100644 "+name+"\x00"), h...)
	}
	tree := func(es [][]byte) []byte { return bytes.Join(es, nil) }
	var es [][]byte
	for i := 0; i < 2000; i++ {
		es = append(es, entry(fmt.Sprintf("d%04d", i)))
	}
	base := tree(es)
	changed := append([][]byte{}, es...)
	for _, i := range []int{3, 1000, 1996} {
		changed[i] = entry(fmt.Sprintf("d%04d", i))
	}
	cases := map[string][2][]byte{
		"empty both":    {nil, nil},
		"empty base":    {nil, base},
		"empty target":  {base, nil},
		"same":          {base, base},
		"three changed": {base, tree(changed)},
		"added":         {tree(es[:1500]), base},
		"removed":       {base, tree(append(append([][]byte{}, es[:10]...), es[1990:]...))},
		"moved":         {base, tree(append(append([][]byte{}, es[1000:]...), es[:1000]...))},
		"twice":         {tree([][]byte{es[0], es[0], es[1]}), tree([][]byte{es[1], es[0], es[0], es[0]})},
		"not a tree":    {[]byte("abc"), []byte("abd")},
		"half a tree":   {base, base[:len(base)-3]},
		"big insert":    {tree(es[:1]), tree(es[1000:])},
	}
	for i := 0; i < 100; i++ {
		var a, b [][]byte
		for _, e := range es[:rng.IntN(300)] {
			if rng.IntN(3) > 0 {
				a = append(a, e)
			}
			if rng.IntN(3) > 0 {
				b = append(b, e)
			} else if rng.IntN(2) == 0 {
				b = append(b, entry("x"))
			}
		}
		cases[fmt.Sprint("random ", i)] = [2][]byte{tree(a), tree(b)}
	}
	for name, c := range cases {
		d := EncodeTreeDelta(c[0], c[1])
		got, err := ApplyDelta(c[0], d)
		if err != nil || !bytes.Equal(got, c[1]) {
			t.Fatalf("%s: applies to %d bytes (%v), want %d", name, len(got), err, len(c[1]))
		}
	}
	if d := EncodeTreeDelta(base, tree(changed)); len(d) > 200 {
		t.Fatalf("three changed entries take a %d-byte delta (EncodeDelta's: %d)", len(d), len(EncodeDelta(base, tree(changed))))
	}
}

func FuzzEncodeTreeDelta(f *testing.F) {
	f.Add([]byte("100644 a\x00aaaaaaaaaaaaaaaaaaaa100644 b\x00bbbbbbbbbbbbbbbbbbbb"), []byte("100644 b\x00bbbbbbbbbbbbbbbbbbbb"))
	f.Add([]byte("40000 d\x00xxxxxxxxxxxxxxxxxxxx"), []byte("x"))
	f.Add([]byte{}, []byte("100644 a\x00aaaaaaaaaaaaaaaaaaaa"))
	f.Fuzz(func(t *testing.T, base, target []byte) {
		got, err := ApplyDelta(base, EncodeTreeDelta(base, target))
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("delta of %d bytes from %d applies to %d (%v)", len(target), len(base), len(got), err)
		}
	})
}
