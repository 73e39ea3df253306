package odb

import "testing"

// FindRaw finds each entry of a tree as decoding does, reports a missing
// name as not found, and a malformed tree as an error.
func TestFindRaw(t *testing.T) {
	h := hashOf([]byte("x"))
	entries := []Entry{{Name: "a.json", Mode: 0o100644, Hash: h}, {Name: "d", Mode: 0o040000, Hash: EmptyTree}, {Name: "z", Mode: 0o100755, Hash: h}}
	raw := EncodeTree(entries)
	for _, e := range entries {
		if got, ok, err := FindRaw(raw, e.Name); err != nil || !ok || got != e {
			t.Fatalf("FindRaw(%q) = %+v, %v, %v", e.Name, got, ok, err)
		}
	}
	if _, ok, err := FindRaw(raw, "b"); ok || err != nil {
		t.Fatalf("FindRaw of a missing name: %v, %v", ok, err)
	}
	if _, _, err := FindRaw(raw[:len(raw)-3], "z"); err == nil {
		t.Fatal("FindRaw of a cut tree: no error")
	}
	if _, _, err := FindRaw([]byte("9x a\x00"+string(h[:])), "a"); err == nil {
		t.Fatal("FindRaw of a bad mode: no error")
	}
}
