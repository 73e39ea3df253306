package odb

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// BenchmarkReadPacked reads every object of genRepo's pack (commits, trees,
// blobs, delta chains), as a walk over a history does: ns/op is per object.
func BenchmarkReadPacked(b *testing.B) {
	repo := genRepo(b)
	git(b, repo, nil, "repack", "-adq")
	var hs []plumbing.Hash
	for _, l := range strings.Fields(string(git(b, repo, nil, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))) {
		hs = append(hs, plumbing.NewHash(l))
	}
	db := Open(filepath.Join(repo, "objects"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := db.Read(hs[i%len(hs)]); err != nil {
			b.Fatal(err)
		}
	}
}
