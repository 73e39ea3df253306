package engine

import (
	"fmt"
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
// commands by): "ratio" is status ns/op ÷ validate ns/op, wanted ≤ 2.
func BenchmarkStatus1000(b *testing.B) {
	e := statusRepo(b, 1000)
	paths, err := e.AllPaths()
	if err != nil {
		b.Fatal(err)
	}
	measure := func(f func() error) float64 {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start).Nanoseconds()) / float64(b.N)
	}
	b.ResetTimer()
	validate := measure(func() error { _, err := e.Validate(paths, false); return err })
	status := measure(func() error {
		fs, err := e.Status()
		if err == nil && len(fs) != 1000 {
			err = fmt.Errorf("status lists %d files", len(fs))
		}
		return err
	})
	b.ReportMetric(status/validate, "ratio")
	b.Logf("Status %.1f ms/op, Validate %.1f ms/op: ratio %.2f× (target ≤ 2×)", status/1e6, validate/1e6, status/validate)
}
