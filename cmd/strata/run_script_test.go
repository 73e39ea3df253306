package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMakeRunStartsWatcher runs the main job's script (what `make run`
// runs) on a fresh directory, several times: each time it must seed the
// repository, start the watcher and keep it running until SIGINT. It once
// ended early most of the time, when a `--help | grep -q` probe under
// pipefail lost to SIGPIPE.
func TestMakeRunStartsWatcher(t *testing.T) {
	if testing.Short() {
		t.Skip("process tests skipped in -short mode")
	}
	bin, err := exec.LookPath("strata")
	require.NoError(t, err, "testscript.Main puts the test binary on PATH as strata")
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "run.sh"))
	require.NoError(t, err)
	env := append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "MEMORY_FILE_PATH=",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	for i := 0; i < 4; i++ {
		dir := filepath.Join(t.TempDir(), "sandbox")
		cmd := exec.Command("bash", script, bin, dir)
		cmd.Env = env
		cmd.Stdout = nil
		stderr, err := cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		up := make(chan bool, 1)
		var log strings.Builder
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "watching") {
					up <- true
				}
			}
			close(up)
		}()
		select {
		case ok := <-up:
			require.True(t, ok, "run %d: the script ended before the watcher was up:\n%s", i, log.String())
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("run %d: watcher not up after 30s", i)
		}
		// Still running a moment later: the main job keeps running.
		time.Sleep(200 * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.Signal(0)), "run %d: the watcher exited on its own", i)
		out, err := exec.Command(bin, "-C", dir, "status").CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "watcher: running", "run %d: status names the running watcher", i)
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		require.NoError(t, cmd.Wait(), "run %d: the watcher stops cleanly on Ctrl-C", i)
	}
}
