package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

// In a partial clone whose promisor remote is gone, the first missing
// object costs one git cat-file; the next ones are not asked for (each
// could wait for a network).
func TestPromisorAskedOnceWhenDown(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	base := realPath(t, t.TempDir())
	remote := filepath.Join(base, "remote.git")
	src := filepath.Join(base, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, src, true)
	var blobs []string
	for _, c := range []string{"one\n", "two\n", "three\n"} {
		writeFile(t, filepath.Join(src, "f.txt"), c)
		runGit(t, src, "add", "f.txt")
		runGit(t, src, "commit", "-q", "-m", c)
		blobs = append(blobs, runGit(t, src, "rev-parse", "HEAD:f.txt"))
	}
	runGit(t, base, "clone", "-q", "--bare", src, remote)
	runGit(t, remote, "config", "uploadpack.allowfilter", "true")
	clone := filepath.Join(base, "clone")
	runGit(t, base, "-c", "protocol.file.allow=always", "clone", "-q", "--no-checkout", "--filter=blob:none", "file://"+remote, clone)
	if err := os.RemoveAll(remote); err != nil { // the promisor remote is gone
		t.Fatal(err)
	}

	// Count the git processes strata starts, through a git on PATH that
	// logs its arguments and runs the real one.
	shim := filepath.Join(base, "bin")
	logFile := filepath.Join(base, "git.log")
	writeFile(t, filepath.Join(shim, "git"), "#!/bin/sh\necho \"$*\" >> "+logFile+"\nexec "+realGit+" \"$@\"\n")
	if err := os.Chmod(filepath.Join(shim, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))

	s, err := Open(clone)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, b := range blobs {
		_, err := s.ReadBlobLimit(b, 1<<20)
		if err == nil {
			t.Fatalf("blob %s read though the promisor remote is gone", b)
		}
		// recorded, yet not fetchable: an I/O failure, not "not recorded"
		if errors.Is(err, state.ErrNotFound) || !strings.Contains(err.Error(), "promisor remote") {
			t.Fatalf("blob %s: %v, want a failure naming the promisor remote", b, err)
		}
	}
	data, _ := os.ReadFile(logFile)
	if n := strings.Count(string(data), "cat-file"); n != 1 {
		t.Fatalf("git cat-file ran %d times for 3 missing objects, want 1:\n%s", n, data)
	}
}
