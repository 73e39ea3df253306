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

// BenchmarkBlame50Keys10kVersions: blame over 10 000 recorded versions of a
// JSON file holding 50 keys under /keys (each version changes one of them)
// and one key, /since, that no version changes; the whole engine path: the
// path's log read back from the last version, each version's bytes, the
// per-key walk. "recent" blames /keys: the walk ends 50 versions back, where
// every key's run has ended. "whole" blames the file: /since holds the first
// version's value, so the walk reads all 10 000 versions, the worst case.
// Target: under 200 ms.
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
		sb.WriteString(`{"since": 0, "keys": {`)
		for i, x := range vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "\"key%02d\": %d", i, x)
		}
		sb.WriteString("}}\n")
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
	// The first read of the history after recording catches strata's index
	// of the ref up with the new commits (here all 10 000, once, for every
	// command that reads history): not blame's work, so done before timing.
	if _, err := e.Blame(k, ""); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, pointer string
		lines         int
	}{{"recent", "/keys", keys}, {"whole", "", keys + 1}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				lines, err := e.Blame(k, c.pointer)
				if err != nil || len(lines) != c.lines {
					b.Fatal(err, len(lines))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/blame")
		})
	}
}
