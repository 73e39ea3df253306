package syncer

import (
	"os"
	"testing"
)

// TestMain removes the benchmarks' fixtures only once every benchmark has
// run: deleting thousands of files just before a measured iteration would
// slow that iteration's file creations (ext4 skips the inodes freed in the
// last ~30 s when it allocates new ones).
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}
