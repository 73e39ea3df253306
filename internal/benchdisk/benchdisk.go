// Package benchdisk is what the benchmarks that write to a real disk share:
// waiting, before a measured run, until creating files there runs at the
// disk's ordinary pace, and writing out dirty data before a measured step.
// Benchmarks only; nothing in strata itself imports it.
package benchdisk

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Ordinary is the pace below which Calm stops waiting: twice the 25-40 µs a
// file that creating small files takes on this project's ext4 disk when
// nothing was deleted on it lately.
const Ordinary = 60 * time.Microsecond

// probes holds the files of every probe this process made, under TMPDIR;
// RemoveProbes removes it.
var probes string

// RemoveProbes removes the probes' files; a TestMain calls it when every
// benchmark has run (never between them: deleting is what slows the disk).
func RemoveProbes() {
	if probes != "" {
		os.RemoveAll(probes)
		probes = ""
	}
}

// Calm waits until creating files under TMPDIR runs at the disk's ordinary
// pace, and returns that pace (the time to create and write one small
// file). Right after many files were deleted on the same part of the disk
// (by an earlier benchmark, a test's clean-up), ext4 without a journal skips
// the inodes freed in the last dirty_expire_centisecs (30 s) when it
// allocates new ones, scanning past each of them on every create: creating
// 1 000 files then takes 10 to 30 times longer, whoever creates them. The
// probe flushes the disk (Settle), as each measured step does, then creates
// 200 files in a new directory and deletes none (see RemoveProbes); while
// that is slower than
// Ordinary a file, Calm waits, up to 2 minutes in all (the slow pace lasts
// minutes), and logs each try.
func Calm(tb testing.TB) time.Duration {
	tb.Helper()
	if probes == "" {
		d, err := os.MkdirTemp("", "strata-calm-")
		if err != nil {
			tb.Fatal(err)
		}
		probes = d
	}
	const files = 200
	deadline := time.Now().Add(2 * time.Minute)
	for {
		dir, err := os.MkdirTemp(probes, "calm")
		if err != nil {
			tb.Fatal(err)
		}
		Settle() // as before each measured step: the probe times creating, not writing back
		start := time.Now()
		for i := 0; i < files; i++ {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), []byte("x\n"), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		per := time.Since(start) / files
		if per < Ordinary || time.Now().After(deadline) {
			tb.Logf("creating a file: %v", per)
			return per
		}
		tb.Logf("creating a file takes %v (files deleted recently nearby?): waiting", per)
		time.Sleep(5 * time.Second)
	}
}
