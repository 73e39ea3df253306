package engine

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

// BenchmarkBlame50Keys10kVersions: blame of a 50-key JSON file over 10 000
// recorded versions (each changing one key), the whole engine path: the
// path's log, every version's bytes, the per-key walk. Target: under 200 ms.
func BenchmarkBlame50Keys10kVersions(b *testing.B) {
	const versions, keys = 10000, 50
	// Not b.TempDir: the git gc --auto strata starts in the background may
	// still be writing when the benchmark ends.
	dir, err := os.MkdirTemp("", "strata-blame-bench")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".strata.yaml"), []byte("# defaults\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	e, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	const path = ".claude/bench.json"
	k, ok := e.Config().Classify(path)
	if !ok {
		b.Fatal("not kept")
	}
	vals := make([]int, keys)
	t := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for v := 0; v < versions; v++ {
		vals[v%keys] = v
		var sb strings.Builder
		sb.WriteString("{")
		for i, x := range vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "\"key%02d\": %d", i, x)
		}
		sb.WriteString("}\n")
		ch := state.Change{Path: path, Content: []byte(sb.String()), Class: k.Class, Schema: k.Schema, Source: state.SourceRecord, Time: t.Add(time.Duration(v) * time.Second)}
		if _, err := e.store.Record(ch); err != nil {
			b.Fatal(err)
		}
	}
	// strata runs git gc --auto every 1 000 recorded changes: measure the
	// packed history a user has, not 10 000 loose objects.
	for i := 0; i < 600; i++ { // let a background gc --auto finish first
		if _, err := os.Stat(filepath.Join(dir, ".git", "gc.pid")); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, err := exec.Command("git", "-C", dir, "gc", "-q").CombinedOutput(); err != nil {
		b.Logf("git gc: %v: %s", err, out) // measured as it stands
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lines, err := e.Blame(k, "")
		if err != nil || len(lines) != keys {
			b.Fatal(err, len(lines))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/blame")
}
