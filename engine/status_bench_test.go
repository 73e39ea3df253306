package engine

import (
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
)

// statusRepo keeps state/ws-*.json as workflow state, records n valid files
// with init and then changes a tenth of them one recording at a time, so the
// history has n/10+1 commits.
func statusRepo(tb testing.TB, n int) *Engine {
	e := newRepo(tb)
	yaml := "files:\n  - glob: \"state/*.json\"\n    class: workflow-state\n    schema: workflow-state\n"
	e = withConfig(tb, e, yaml)
	ws := func(i, v int) string {
		return fmt.Sprintf(`{"type": "APEX", "phase": "plan", "lastUpdated": "2026-11-22T09:%02d:00Z", "ttl": "36500d", "context": "task %d, version %d"}`+"\n", i%60, i, v)
	}
	for i := 0; i < n; i++ {
		edit(tb, e, fmt.Sprintf("state/ws-%04d.json", i), ws(i, 0))
	}
	// the team's own files, committed to git: a rule of .strata.yaml keeps
	// a file git has in a commit (an untracked or only staged one only
	// with strata.keepPrivate)
	for _, args := range [][]string{{"add", "state"}, {"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "state"}} {
		if out, err := exec.Command("git", append([]string{"-C", e.Config().Root}, args...)...).CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	e = withConfig(tb, e, yaml) // the index read again
	if _, err := e.Init(); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i += 10 {
		p := fmt.Sprintf("state/ws-%04d.json", i)
		edit(tb, e, p, ws(i, 1))
		k, _ := e.Config().Classify(p)
		if _, err := e.Record([]config.Kept{k}, state.SourceRecord); err != nil {
			tb.Fatal(err)
		}
	}
	return e
}

// BenchmarkStatus1000 measures Status of 1 000 kept files against Validate
// of the same files in the same run (the peer `make bench` compares the
// commands by): "ratio" is the median status time ÷ the median validate
// time, wanted ≤ 2. Each runs once before timing, then the two alternate, so
// a garbage collection or a busy moment of the machine falls on either.
func BenchmarkStatus1000(b *testing.B) {
	e := statusRepo(b, 1000)
	paths, err := e.AllPaths()
	if err != nil {
		b.Fatal(err)
	}
	validate := func() error { _, err := e.Validate(paths, false); return err }
	status := func() error {
		fs, err := e.Status()
		if err == nil && len(fs) != 1000 {
			err = fmt.Errorf("status lists %d files", len(fs))
		}
		return err
	}
	var vs, ss []time.Duration
	timed := func(f func() error, into *[]time.Duration) {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*into = append(*into, time.Since(start))
	}
	for _, f := range []func() error{validate, status} { // once each, untimed
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		timed(validate, &vs)
		timed(status, &ss)
	}
	b.StopTimer()
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / 1e6
	}
	st, va := median(ss), median(vs)
	b.ReportMetric(st/va, "ratio")
	if b.N < 5 {
		return // the framework's first round of one: no median to speak of
	}
	b.Logf("Status %.1f ms, Validate %.1f ms (medians of %d alternating runs): ratio %.2f× (target ≤ 2×)", st, va, b.N, st/va)
}
