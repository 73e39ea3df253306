package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// BenchmarkGitSize10k records 10 000 changes the way strata does without
// any gc by the user — runs of single changes (the watcher's usual batch,
// loose objects) and batches of twelve (a `strata record`, one pack) over
// twenty kept files — letting the background `git gc --auto` run as it
// would, then compares the size of .git with the size after `git gc`:
//
//	TMPDIR=$PWD/.bench go test -run XXX -bench GitSize10k -benchtime 1x ./gitstore/
//
// Target (issue 11): at most 1.3× what git gc reaches.
func BenchmarkGitSize10k(b *testing.B) { benchGitSize(b, 10_000, 1.3) }

// BenchmarkGitSize100k is BenchmarkGitSize10k at 100 000 changes, the
// point of the original contract's storage target (at most 1.5× what git
// gc reaches). It takes minutes, so `make bench` runs it last (its gc's
// deletions would slow the disk for the sections after it):
//
//	TMPDIR=$PWD/.bench go test -run XXX -bench GitSize100k -benchtime 1x -timeout 60m ./gitstore/
func BenchmarkGitSize100k(b *testing.B) { benchGitSize(b, 100_000, 1.5) }

// benchGitSize records changes up to changes, then up to one change before
// the next gc, and compares .git with the same after git gc at both points.
func benchGitSize(b *testing.B, changes int, target float64) {
	for i := 0; i < b.N; i++ {
		dir := realPath(b, b.TempDir())
		initRepo(b, dir, true)
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		at := t0
		next := func() state.Change {
			n++
			at = at.Add(time.Second)
			p := fmt.Sprintf("PhaseOutputs/s%d/phase-%02d.json", n%4, n%20)
			body := fmt.Sprintf(`{"type":"APEX","phase":"implement","lastUpdated":%q,"context":"change %d of a long session","workers":[{"id":"W%02d","status":"completed","duration_seconds":%d}],"notes":%q}`,
				at.Format(time.RFC3339), n, n%7, n%97, strings.Repeat("steady text ", 12))
			return change(p, body, at)
		}
		// Measured at changes (a multiple of GCInterval), right after the
		// gc that the count starts there, and at the worst point of the next
		// cycle: one change before the count starts the next gc.
		for _, upto := range []int{changes, changes + GCInterval - 1} {
			for n < upto {
				for k := 0; k < 8 && n < upto; k++ {
					if _, err := s.Record(next()); err != nil {
						b.Fatal(err)
					}
				}
				var batch []state.Change
				for k := 0; k < 12 && n < upto; k++ {
					batch = append(batch, next())
				}
				if len(batch) > 0 {
					if _, err := s.RecordEach(batch); err != nil {
						b.Fatal(err)
					}
				}
			}
			waitGC(b, dir)
			gitDir := filepath.Join(dir, ".git")
			before := duKB(b, gitDir)
			packs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.pack"))
			loose := strings.TrimSpace(runGit(b, dir, "count-objects"))
			cp := filepath.Join(b.TempDir(), "copy.git")
			if out, err := exec.Command("cp", "-a", gitDir, cp).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
			runGit(b, dir, "--git-dir="+cp, "gc", "-q")
			after := duKB(b, cp)
			ratio := float64(before) / float64(after)
			if upto == changes {
				b.ReportMetric(ratio, "ratio")
			} else {
				b.ReportMetric(ratio, "worst-ratio")
			}
			b.Logf(".git after %d changes: %d KB (%d packs, %s); after git gc: %d KB; ratio %.2f× (target ≤ %.1f×)",
				upto, before, len(packs), loose, after, ratio, target)
		}
	}
}

// waitGC waits for the background repacks and gc that the records started:
// first the processes this one started (a geometric repack still writing
// its pack would be measured with the packs it replaces: 1.80× once, on a
// slow disk, before this wait), then a gc that detached itself (git gc
// holds gc.pid, "PID HOST", while it runs; one whose process is gone was
// killed and left it). A gc of 100 000 commits took over 5 minutes on a
// machine whose two cores ran four other test runs (session 24), so the
// wait is long: it bounds a hang, not the gc's pace.
func waitGC(tb testing.TB, dir string) {
	deadline := time.Now().Add(20 * time.Minute)
	WaitHousekeeping()
	time.Sleep(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		if !gcRunning(filepath.Join(dir, ".git")) { // (gone, or its process is)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatal("background gc did not finish")
}

// duKB is the disk usage of dir in KiB, as du counts it (allocated blocks).
func duKB(tb testing.TB, dir string) int64 {
	var total int64
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		total += blocksKB(fi)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return total
}
