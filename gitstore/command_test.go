package gitstore

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandReadsNoGrafts: a git process made by Command follows no
// .git/info/grafts (attack37d M2) and prints nothing about them on stderr,
// whose first line strata's error messages quote (an existing empty graft
// file, /dev/null, had git print its deprecation hint at every command
// that read a commit).
func TestCommandReadsNoGrafts(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, true)
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "b")
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "c")
	real := len(strings.Fields(runGit(t, dir, "rev-list", "HEAD")))
	head, root := runGit(t, dir, "rev-parse", "HEAD"), runGit(t, dir, "rev-parse", "HEAD~2")
	writeFile(t, filepath.Join(dir, ".git", "info", "grafts"), head+" "+root+"\n")
	cmd := Command(exec.Command("git", "rev-list", "HEAD"), dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git rev-list: %v: %s", err, stderr.String())
	}
	if n := len(strings.Fields(stdout.String())); n != real {
		t.Errorf("rev-list listed %d commits, want the %d real ones (no graft followed)", n, real)
	}
	if stderr.Len() > 0 {
		t.Errorf("git printed on stderr: %q", stderr.String())
	}
}
