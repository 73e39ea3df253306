package syncer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

const benchPaths = 1000

// setupBench returns two synced clones and their remote, with 1 000 changed
// kept files recorded on a and not yet synced.
func setupBench(b *testing.B) *world {
	w := newWorld(b, "a", "b")
	a := w.ms[0]
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync()
	w.ms[1].sync()
	changes := make([]state.Change, benchPaths)
	for i := range changes {
		p := fmt.Sprintf(".claude/f%04d.json", i)
		k, _ := a.eng.Config().Classify(p)
		data := fmt.Appendf(nil, `{"n": %d, "at": %q}`+"\n", i, time.Now().Format(time.RFC3339Nano))
		writeFile(b, a.eng.Config().Abs(p), data)
		changes[i] = state.Change{Path: p, Content: data, Class: k.Class, Schema: k.Schema, Source: state.SourceRecord, Time: a.now}
	}
	st, err := gitstore.Open(a.dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Record(changes...); err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkSyncVsGitCLI moves 1 000 changed paths from one clone to another
// through a local bare remote: strata sync on the sender (record check,
// fetch, push) and on the receiver (fetch, fast-forward, validate and write
// 1 000 files atomically), against the git CLI moving the same ref: git push
// from the sender and git fetch into the receiver. It reports both and
// their ratio (strata/git).
func BenchmarkSyncVsGitCLI(b *testing.B) {
	var strataTotal, gitTotal time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		w := setupBench(b)
		a, r := w.ms[0], w.ms[1]
		b.StartTimer()
		start := time.Now()
		if _, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir}); err != nil {
			b.Fatal(err)
		}
		rep, err := Sync(context.Background(), r.eng, Options{Cwd: r.dir})
		if err != nil {
			b.Fatal(err)
		}
		strataTotal += time.Since(start)
		b.StopTimer()
		if len(rep.Written) != benchPaths {
			b.Fatalf("wrote %d files, want %d", len(rep.Written), benchPaths)
		}

		g := setupBench(b)
		ga, gr := g.ms[0], g.ms[1]
		start = time.Now()
		git(b, ga.dir, "push", "--quiet", "--no-verify", g.remote, "refs/strata/state:refs/strata/state")
		git(b, gr.dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", g.remote, "+refs/strata/state:refs/strata-remotes/origin/state")
		gitTotal += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(strataTotal.Milliseconds())/float64(b.N), "strata-ms/op")
	b.ReportMetric(float64(gitTotal.Milliseconds())/float64(b.N), "git-ms/op")
	b.ReportMetric(float64(strataTotal)/float64(gitTotal), "strata/git")
}
