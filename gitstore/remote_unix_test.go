//go:build unix

package gitstore

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A named pipe where the config file is answers "ask git", at once.
func TestRemoteInConfigNamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "config"), 0o644); err != nil {
		t.Skip(err)
	}
	if (&Store{commonDir: dir}).remoteInConfig("origin") {
		t.Error("remoteInConfig(origin) = true on a named pipe")
	}
}
