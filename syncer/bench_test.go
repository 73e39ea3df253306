package syncer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/internal/benchdisk"
	"github.com/strata-dev/strata/state"
)

const benchPaths = 1000

// benchDir holds the fixtures of every benchmark iteration; TestMain
// removes it at the end, never between iterations.
var benchDir string

// fixtureDir returns a new directory under benchDir.
func fixtureDir(b *testing.B) string {
	b.Helper()
	if benchDir == "" {
		d, err := os.MkdirTemp("", "strata-syncbench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	d, err := os.MkdirTemp(benchDir, "w")
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// setupBench returns two synced clones and their remote, with 1 000 changed
// kept files recorded on a and not yet synced: new files, or with replace,
// new versions of files both clones already hold (synced beforehand). With
// fresh, nothing was recorded before them: the receiver has no .claude
// folder yet, as a clone joining the sync.
func setupBench(b *testing.B, replace, perPath, fresh bool) *world {
	w := newWorldIn(b, fixtureDir(b), "a", "b")
	a := w.ms[0]
	if !fresh {
		a.write(wsPath, ws("plan"))
	}
	if replace {
		for i := 0; i < benchPaths; i++ {
			a.write(benchPath(i), `{"n": -1}`+"\n")
		}
	}
	a.record()
	a.sync()
	w.ms[1].sync()
	changes := make([]state.Change, benchPaths)
	for i := range changes {
		p := benchPath(i)
		k, _ := a.eng.Config().Classify(p)
		data := benchData(i)
		writeFile(b, a.eng.Config().Abs(p), data)
		changes[i] = state.Change{Path: p, Content: data, Class: k.Class, Schema: k.Schema, Source: state.SourceRecord, Time: a.now}
	}
	st, err := gitstore.Open(a.dir)
	if err != nil {
		b.Fatal(err)
	}
	if !perPath {
		if _, err := st.Record(changes...); err != nil {
			b.Fatal(err)
		}
		return w
	}
	for _, c := range changes { // one commit each, as record and the watcher write them
		if _, err := st.Record(c); err != nil {
			b.Fatal(err)
		}
	}
	return w
}

func benchPath(i int) string { return fmt.Sprintf(".claude/f%04d.json", i) }

func benchData(i int) []byte {
	return fmt.Appendf(nil, `{"n": %d, "at": %q}`+"\n", i, time.Now().Format(time.RFC3339Nano))
}

// BenchmarkSyncVsGitCLI moves 1 000 changed paths from one clone to another
// through a local bare remote: strata sync on the sender (record check,
// fetch, push) and on the receiver (fetch, fast-forward, validate and write
// 1 000 files atomically and durably), against the git CLI moving the same
// ref: git push from the sender and git fetch into the receiver. Beside
// them it times the disk's floor: a plain loop creating and writing the
// same 1 000 files (no fsync) in a fresh directory on the same disk, which
// bounds what any writer of those files can reach. The three are measured
// in turn, in a rotating order, each on fixtures set up beforehand and
// with nothing left dirty on the disk by the set-up or the step before;
// no fixture is deleted before the benchmark ends, and the first iteration
// waits until file creation is at its ordinary pace (see calm). It reports
// each one's milliseconds per op and the ratio strata/git.
func BenchmarkSyncVsGitCLI(b *testing.B) { benchSync(b, false, false, false) }

// BenchmarkSyncFreshVsGitCLI is BenchmarkSyncVsGitCLI into a receiver that
// has no .claude folder yet (nothing was synced before): each received
// path's folder is made by the sync itself.
func BenchmarkSyncFreshVsGitCLI(b *testing.B) { benchSync(b, false, false, true) }

// BenchmarkSyncReplaceVsGitCLI is BenchmarkSyncVsGitCLI where the 1 000
// paths are new versions of files the receiver already holds: its sync
// replaces them (a new file renamed over each), and the floor rewrites
// them in place, as a plain loop does. On a file system that returns freed
// blocks to the disk at once (ext4 mounted with discard), each replaced
// file's old block is discarded before the rename returns, whoever
// replaces it; git's push and fetch replace no file.
func BenchmarkSyncReplaceVsGitCLI(b *testing.B) { benchSync(b, true, false, false) }

// BenchmarkSyncReplacePerPathVsGitCLI is BenchmarkSyncReplaceVsGitCLI with
// each of the 1 000 new versions recorded in a commit of its own, as
// `strata record` and the watcher record them (the others record them in
// one commit): the receiver's check of the fetched history reads 1 000
// commits' trees, and git's push and fetch move 1 000 commits and trees.
func BenchmarkSyncReplacePerPathVsGitCLI(b *testing.B) { benchSync(b, true, true, false) }

func benchSync(b *testing.B, replace, perPath, fresh bool) {
	var strataTotal, gitTotal, floorTotal, sweepTotal time.Duration
	b.StopTimer()
	calm(b)
	for i := 0; i < b.N; i++ {
		w, g, floor := setupBench(b, replace, perPath, fresh), setupBench(b, replace, perPath, fresh), fixtureDir(b)
		if replace {
			timeFloor(b, floor) // the files the floor then rewrites in place
		}
		steps := []func(){
			func() {
				d, sweep := timeStrataSync(b, w)
				strataTotal, sweepTotal = strataTotal+d, sweepTotal+sweep
			},
			func() { gitTotal += timeGitSync(b, g) },
			func() { floorTotal += timeFloor(b, floor) },
		}
		for j := range steps {
			benchdisk.Settle() // what the step before left dirty is not this step's to write
			steps[(i+j)%len(steps)]()
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(strataTotal), "strata-ms/op")
	b.ReportMetric(ms(gitTotal), "git-ms/op")
	b.ReportMetric(ms(floorTotal), "floor-ms/op")
	b.ReportMetric(ms(sweepTotal), "sweep-ms/op")
	b.ReportMetric(float64(strataTotal)/float64(gitTotal), "strata/git")
}

// calm waits, once per process, until creating files in the benchmark's
// directory runs at the disk's ordinary pace (benchdisk.Calm).
func calm(b *testing.B) {
	if calmed {
		return
	}
	calmed = true
	benchdisk.Calm(b)
}

var calmed bool

// timeStrataSync times the two syncs, and apart from them the sweep that
// `strata sync` would start in the background (the replaced files the
// receiver left in its freed directory, removed).
func timeStrataSync(b *testing.B, w *world) (sync, sweep time.Duration) {
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
	d := time.Since(start)
	b.StopTimer()
	if len(rep.Written) != benchPaths {
		b.Fatalf("wrote %d files, want %d", len(rep.Written), benchPaths)
	}
	start = time.Now()
	if _, err := r.eng.SweepFreed(); err != nil {
		b.Fatal(err)
	}
	return d, time.Since(start)
}

func timeGitSync(b *testing.B, g *world) time.Duration {
	ga, gr := g.ms[0], g.ms[1]
	start := time.Now()
	git(b, ga.dir, "push", "--quiet", "--no-verify", g.remote, "refs/strata/state:refs/strata/state")
	git(b, gr.dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", g.remote, "+refs/strata/state:refs/strata-remotes/origin/state")
	return time.Since(start)
}

// timeFloor creates and writes the benchmark's 1 000 files in dir, or
// rewrites them where they exist, as a plain loop does: open, write, close.
func timeFloor(b *testing.B, dir string) time.Duration {
	data := make([][]byte, benchPaths)
	for i := range data {
		data[i] = benchData(i)
	}
	start := time.Now()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i, d := range data {
		if err := os.WriteFile(filepath.Join(dir, benchPath(i)), d, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}
