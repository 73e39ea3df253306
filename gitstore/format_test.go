package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A repository strata would damage is refused on open, before anything is
// written; the extensions strata can work under are not.
func TestOpenRefusesFormatsItWouldDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		init   []string
		config [][2]string
		refuse string // "" when Open must succeed
	}{
		{"sha256", []string{"--object-format=sha256"}, nil, "extensions.objectformat = sha256"},
		{"unknown extension", nil, [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.futurething", "yes"}}, "extensions.futurething"},
		{"reftable", nil, [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.refstorage", "reftable"}}, "extensions.refstorage = reftable"},
		{"version 2", nil, [][2]string{{"core.repositoryformatversion", "2"}}, "format version 2"},
		{"worktree config", nil, [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.worktreeConfig", "true"}}, ""},
		{"sha1 said", nil, [][2]string{{"core.repositoryformatversion", "1"}, {"extensions.objectFormat", "sha1"}}, ""},
		{"version 0 ignores extensions", nil, [][2]string{{"extensions.futurething", "yes"}}, ""},
		{"version 01", nil, [][2]string{{"core.repositoryformatversion", "01"}, {"extensions.worktreeConfig", "true"}}, ""},
		{"version -1", nil, [][2]string{{"core.repositoryformatversion", "-1"}}, ""},
		{"version not a number", nil, [][2]string{{"core.repositoryformatversion", "one"}}, "is not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := realPath(t, t.TempDir())
			runGit(t, dir, append([]string{"init", "-q"}, tc.init...)...)
			for _, kv := range tc.config {
				runGit(t, dir, "config", kv[0], kv[1])
			}
			s, err := Open(dir)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				s.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("open: %v, want an error naming %q", err, tc.refuse)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "strata")); !os.IsNotExist(err) {
				t.Fatalf(".git/strata exists after a refused open: %v", err)
			}
		})
	}
}
