package odb

import (
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// Prefix returns the objects whose hex name starts with prefix (at least 4
// hex digits, lowercase): loose objects and those of every readable pack,
// here and in the alternates, each once.
func (db *DB) Prefix(prefix string) ([]plumbing.Hash, error) {
	if len(prefix) < 4 || len(prefix) > 2*hashLen {
		return nil, nil
	}
	if _, err := hex.DecodeString(prefix[:len(prefix)&^1]); err != nil {
		return nil, nil
	}
	db.rescan()
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	add := func(h plumbing.Hash) {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	names, err := os.ReadDir(filepath.Join(db.dir, prefix[:2]))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range names {
		name := prefix[:2] + e.Name()
		if len(name) == 2*hashLen && name[:len(prefix)] == prefix && plumbing.IsHash(name) {
			add(plumbing.NewHash(name))
		}
	}
	// The prefix as bytes, rounded down (lo) and padded up (hi) to a whole hash.
	lo := []byte(prefix + "0000000000000000000000000000000000000000"[len(prefix):])
	hi := []byte(prefix + "ffffffffffffffffffffffffffffffffffffffff"[len(prefix):])
	var lob, hib plumbing.Hash
	hex.Decode(lob[:], lo)
	hex.Decode(hib[:], hi)
	for _, p := range db.packs {
		hs, err := p.between(lob, hib)
		if err != nil {
			continue
		}
		for _, h := range hs {
			add(h)
		}
	}
	for _, a := range db.alternates() {
		hs, err := a.Prefix(prefix)
		if err != nil {
			continue // as an unreadable pack: its objects are not listed
		}
		for _, h := range hs {
			add(h)
		}
	}
	return out, nil
}
