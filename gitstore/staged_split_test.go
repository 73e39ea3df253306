package gitstore

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStagedReadsASplitOrSparseIndex: the pre-commit hook's view of the
// index (Staged) reads a split index and a sparse one, which go-git's
// decoder refuses ("unknown extension"): every commit of such a repository
// was refused by the hook (attack26 recheck).
func TestStagedReadsASplitOrSparseIndex(t *testing.T) {
	for _, kind := range []string{"split", "sparse"} {
		t.Run(kind, func(t *testing.T) {
			dir := realPath(t, t.TempDir())
			initRepo(t, dir, false)
			writeFile(t, filepath.Join(dir, ".claude", "x.json"), `{"a":1}`)
			writeFile(t, filepath.Join(dir, "other", "y.txt"), "y\n")
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "one")
			if kind == "split" {
				runGit(t, dir, "config", "core.splitIndex", "true")
				runGit(t, dir, "update-index", "--split-index")
			} else {
				runGit(t, dir, "sparse-checkout", "init", "--cone", "--sparse-index")
				runGit(t, dir, "sparse-checkout", "set", ".claude")
			}
			writeFile(t, filepath.Join(dir, ".claude", "x.json"), `{"a":2}`)
			runGit(t, dir, "add", ".claude/x.json")
			s, err := Open(dir)
			require.NoError(t, err)
			staged, err := s.Staged("")
			require.NoError(t, err)
			blob := runGit(t, dir, "rev-parse", ":.claude/x.json")
			assert.Equal(t, StagedFile{Blob: blob, Regular: true}, staged[".claude/x.json"])
		})
	}
}
