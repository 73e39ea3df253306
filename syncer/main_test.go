package syncer

import (
	"os"
	"testing"

	"github.com/strata-dev/strata/internal/benchdisk"
)

// TestMain removes the benchmarks' fixtures and the disk probes' files only once every benchmark has
// run: deleting thousands of files just before a measured iteration would
// slow that iteration's file creations (ext4 skips the inodes freed in the
// last ~30 s when it allocates new ones). With STRATA_BENCH_KEEP set (make
// bench sets it) they are left for the caller to remove, so that the next
// benchmark does not start right after their deletion either.
func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv("STRATA_BENCH_KEEP") == "" {
		if benchDir != "" {
			os.RemoveAll(benchDir)
		}
		benchdisk.RemoveProbes()
	}
	os.Exit(code)
}
