package gitstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeepPrivateSpellings: a strata.keepPrivate value written as a user
// types a path — "./config/a.yml", "config//a.yml", the absolute path,
// also through a link to the work tree — names the repo-relative path;
// one outside the work tree or a glob stays as written, naming nothing
// (attack26 recheck F7: "./config/credentials.yml" was silently not
// honoured).
func TestKeepPrivateSpellings(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "repo")
	require.NoError(t, os.Mkdir(dir, 0o755))
	initRepo(t, dir, false)
	require.NoError(t, os.Symlink(dir, filepath.Join(top, "alias")))
	for _, v := range []string{"./config/a.yml", "config//a.yml", filepath.Join(dir, "config/a.yml"),
		filepath.Join(top, "alias", "config", "a.yml"), "config/*", "../other/a.yml", "/elsewhere/a.yml"} {
		runGit(t, dir, "config", "--add", "strata.keepPrivate", v)
	}
	s, err := Open(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"config/a.yml", "config/a.yml", "config/a.yml", "config/a.yml", "config/*", "../other/a.yml", "/elsewhere/a.yml"},
		s.Settings().KeepPrivate)
}
