package gitstore

// Benchmarks against the peers of docs/contract.md §14, run in the same process so the
// ratios compare like with like:
//
//	go test -run XXX -bench 'Record' ./gitstore/       Record vs the git plumbing loop
//	go test -run XXX -bench 'AtHistory' ./gitstore/    At+ReadFile vs git log --before + git show
//
// Each prints a "ratio" metric (peer ns/op ÷ strata ns/op) and a log line.
// The repositories live under TMPDIR. Record is bound by the file system:
// four new loose objects and the ref's lock file are four-to-five inode
// allocations plus a rename over the ref, which on a busy ext4 cost
// 0.1–1 ms each, and on a disk mounted with discard that rename waits for
// the discard of the old ref file's block; so compare on the disk the
// users' repositories live on (TMPDIR=$PWD/.bench) and on tmpfs
// (TMPDIR=/dev/shm) for the CPU-bound figure.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/benchdisk"
	"github.com/strata-dev/strata/state"
)

// benchTree is the layout of the benchmark repositories: a typical set of
// kept files, the recorded one nested one level down.
var benchTree = []string{
	".claude/workflow-state.json", ".claude/initiative.json", ".claude/interview-state.json",
	".claude/delegation-log.json", ".claude/settings.json", ".claude/memory.jsonl",
	".claude/memory/MEMORY.md", "MEMORY.md",
	"PhaseOutputs/s1/phase-01-query.json", "PhaseOutputs/s1/phase-02-strategy.json",
	"PhaseOutcomes/f1/001-plan.yaml",
}

const benchPath = ".claude/workflow-state.json"

func benchRepo(b *testing.B) (dir string, s *Store) {
	b.Helper()
	dir = realPath(b, b.TempDir())
	initRepo(b, dir, true)
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var chs []state.Change
	for _, p := range benchTree {
		chs = append(chs, change(p, `{"seed":"`+p+`"}`, t0))
	}
	mustRecord(b, s, chs...)
	return dir, s
}

var recordNs float64 // ns/op of the last BenchmarkRecord run

// BenchmarkRecord records one change of a nested file per op.
func BenchmarkRecord(b *testing.B) {
	old, oldPack := GCInterval, PackInterval
	// No background gc or repack competing for the CPU mid-run: they are
	// housekeeping every 100 and 1 000 records, measured by
	// BenchmarkGitSize10k, not part of one record's latency.
	GCInterval, PackInterval = 1<<30, 0
	defer func() { GCInterval, PackInterval = old, oldPack }()
	perFile := calmDisk(b)
	_, s := benchRepo(b)
	benchdisk.Settle()
	content := []byte(`{"type":"APEX","phase":"implement","lastUpdated":"2026-03-01T12:00:00Z","context":"bench","n":00000000}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(content[len(content)-9:], fmt.Sprintf("%08d", i))
		ch := state.Change{Path: benchPath, Content: content, Class: state.ClassWorkflowState,
			Schema: "workflow-state", Source: state.SourceWatch, Time: t0.Add(time.Duration(i) * time.Second)}
		if _, err := s.Record(ch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	recordNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	if perFile > 0 {
		recordPerFile = perFile
	}
}

// recordPerFile is the time to create one file that the last measured
// BenchmarkRecord run found on its disk before it started.
var recordPerFile time.Duration

// calmDisk waits before a measured run (b.N > 1) until creating files
// under TMPDIR runs at the disk's ordinary pace, as the sync benchmark does:
// a benchmark's clean-up deletes thousands of loose objects, and the runs
// right after it would measure the disk's slow pace, not the recorder. It
// returns the time to create one file (0 for the N=1 run, not probed).
func calmDisk(b *testing.B) time.Duration {
	if b.N <= 1 {
		return 0
	}
	return benchdisk.Calm(b)
}

// BenchmarkRecordGitCLI is the peer: what gitwatch- and dura-style tools run
// per change. The tool keeps the tree listings in memory, so each change
// costs git hash-object -w, one git mktree per tree level, git commit-tree
// and git update-ref (with the old value, as a safe tool would).
func BenchmarkRecordGitCLI(b *testing.B) {
	calmDisk(b)
	dir, s := benchRepo(b)
	ref := s.StateRef()
	parent := runGit(b, dir, "rev-parse", ref)
	root := runGit(b, dir, "ls-tree", ref)
	sub := runGit(b, dir, "ls-tree", ref+":.claude")
	content := `{"type":"APEX","phase":"implement","lastUpdated":"2026-03-01T12:00:00Z","context":"bench","n":%08d}`
	benchdisk.Settle()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blob := gitB(b, dir, fmt.Sprintf(content, i), "hash-object", "-w", "--stdin")
		subTree := gitB(b, dir, replaceEntry(sub, "workflow-state.json", "blob", blob), "mktree")
		rootTree := gitB(b, dir, replaceEntry(root, ".claude", "tree", subTree), "mktree")
		msg := "update " + benchPath + "\n\nStrata-Path: " + benchPath + "\nStrata-Action: update\n"
		commit := gitB(b, dir, msg, "commit-tree", rootTree, "-p", parent)
		gitB(b, dir, "", "update-ref", ref, commit, parent)
		parent = commit
	}
	b.StopTimer()
	cli := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	if recordNs == 0 {
		recordNs = float64(testing.Benchmark(BenchmarkRecord).NsPerOp())
	}
	b.ReportMetric(cli/recordNs, "ratio")
	b.Logf("Record %.0f ns/op, git CLI loop %.0f ns/op: ratio %.1f×", recordNs, cli, cli/recordNs)
	if recordPerFile > 0 {
		// Each change creates four loose objects and the ref's lock file:
		// five file creations bound what any recorder reaches on this disk.
		b.Logf("disk floor: 5 files created a change at %v a file = %.0f ns/op; git CLI loop / floor %.1f×",
			recordPerFile, 5*float64(recordPerFile), cli/(5*float64(recordPerFile)))
	}
}

func gitB(b *testing.B, dir, stdin string, args ...string) string {
	out, err := gitOut(dir, []byte(stdin), args...)
	if err != nil {
		b.Fatalf("git %s: %v", args[0], err)
	}
	return out
}

// replaceEntry swaps name's hash in an ls-tree listing.
func replaceEntry(listing, name, typ, hash string) string {
	var out []string
	for _, line := range strings.Split(listing, "\n") {
		if strings.HasSuffix(line, "\t"+name) {
			mode := "100644"
			if typ == "tree" {
				mode = "040000"
			}
			line = mode + " " + typ + " " + hash + "\t" + name
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n") + "\n"
}

// The 100 000-commit history, built once per test binary run.
var (
	bigOnce sync.Once
	bigDir  string
	bigErr  error
	bigN    = 100_000
	bigStep = 10 * time.Second
)

func bigHistory(b *testing.B) string {
	bigOnce.Do(func() {
		var err error
		if bigDir, err = os.MkdirTemp("", "strata-bench-100k-"); err != nil {
			bigErr = err
			return
		}
		bigDir = realPath(b, bigDir)
		if _, err := gitOut(bigDir, nil, "init", "-q", "-b", "main", "."); err != nil {
			bigErr = err
			return
		}
		start := time.Now()
		cmd := exec.Command("git", "fast-import", "--quiet")
		cmd.Dir = bigDir
		cmd.Env = gitEnv(os.TempDir())
		in, _ := cmd.StdinPipe()
		cmd.Stderr = os.Stderr
		if bigErr = cmd.Start(); bigErr != nil {
			return
		}
		w := bufio.NewWriterSize(in, 1<<20)
		paths := benchTree[:10]
		for i := 0; i < bigN; i++ {
			p := paths[i%len(paths)]
			action := "update"
			if i < len(paths) {
				action = "add"
			}
			msg := fmt.Sprintf("%s %s\n\nStrata-Path: %s\nStrata-Action: %s\nStrata-Class: workflow-state\nStrata-Source: watch\nStrata-Schema: workflow-state\n",
				action, p, p, action)
			content := fmt.Sprintf(`{"path":%q,"version":%d}`, p, i)
			ts := t0.Add(time.Duration(i) * bigStep).Unix()
			fmt.Fprintf(w, "commit refs/strata/state\nauthor %s %d +0000\ncommitter %s %d +0000\ndata %d\n%s", identity, ts, identity, ts, len(msg), msg)
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n\n", p, len(content), content)
		}
		w.Flush()
		in.Close()
		if bigErr = cmd.Wait(); bigErr != nil {
			return
		}
		b.Logf("built %d commits with git fast-import in %s", bigN, time.Since(start).Round(time.Millisecond))
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigDir
}

// TestMain removes the cached 100k history after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	benchdisk.RemoveProbes()
	os.Exit(code)
}

// bigQuery is the i-th look-up: a time in the middle half of the history
// and the path that changed most recently before it.
func bigQuery(i int) (time.Time, string) {
	k := bigN/4 + (i*7919)%(bigN/2)
	return t0.Add(time.Duration(k)*bigStep + bigStep/2), benchTree[(k+3)%10]
}

var (
	gitAtOnce sync.Once
	gitAtNs   float64
)

// gitAt measures the peer: git log -1 --before=T -- PATH, then git show.
func gitAt(b *testing.B, dir string) float64 {
	gitAtOnce.Do(func() {
		const runs = 5
		start := time.Now()
		for i := 0; i < runs; i++ {
			t, p := bigQuery(i)
			h := gitB(b, dir, "", "log", "-1", "--format=%H", "--before="+t.Format(time.RFC3339), "refs/strata/state", "--", p)
			gitB(b, dir, "", "show", h+":"+p)
		}
		gitAtNs = float64(time.Since(start).Nanoseconds()) / runs
	})
	return gitAtNs
}

// BenchmarkAtHistory100k looks up a file's content at a time in the middle
// of a 100 000-commit history: At + ReadFile against git log --before +
// git show. "warm" reuses one Store (a watcher or a long-running agent);
// "open-each" opens the repository per look-up (one CLI invocation).
func BenchmarkAtHistory100k(b *testing.B) {
	dir := bigHistory(b)
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := s.At("refs/strata/state", t0); err != nil {
		b.Fatal(err)
	}
	b.Logf("index warmed in %s", time.Since(start).Round(time.Millisecond))
	// Both sides must agree before their speed is compared.
	for i := 0; i < 3; i++ {
		t, p := bigQuery(i)
		c, err := s.At("refs/strata/state", t)
		if err != nil {
			b.Fatal(err)
		}
		ours, err := s.ReadFile(c, p, anySize)
		if err != nil {
			b.Fatal(err)
		}
		h := gitB(b, dir, "", "log", "-1", "--format=%H", "--before="+t.Format(time.RFC3339), "refs/strata/state", "--", p)
		if theirs := gitB(b, dir, "", "show", h+":"+p); theirs != string(ours) {
			b.Fatalf("At disagrees with git: %q vs %q", ours, theirs)
		}
	}
	peer := gitAt(b, dir)
	run := func(b *testing.B, open bool) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			st := s
			if open {
				if st, err = Open(dir); err != nil {
					b.Fatal(err)
				}
			}
			t, p := bigQuery(i)
			c, err := st.At("refs/strata/state", t)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.ReadFile(c, p, anySize); err != nil {
				b.Fatal(err)
			}
			if open {
				st.Close()
			}
		}
		b.StopTimer()
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(peer/ns, "ratio")
		b.ReportMetric(peer, "git-ns/op")
		b.Logf("At+ReadFile %.0f ns/op, git log --before + git show %.0f ns/op: ratio %.1f×", ns, peer, peer/ns)
	}
	b.Run("warm", func(b *testing.B) { run(b, false) })
	b.Run("open-each", func(b *testing.B) { run(b, true) })
}

// BenchmarkRecordBatch times RecordEach of a batch of k changes written as
// loose objects and as one pack, to place PackMin: a pack costs two fsyncs,
// loose objects a file each.
//
//	TMPDIR=$PWD/.bench go test -run XXX -bench RecordBatch ./gitstore/
func BenchmarkRecordBatch(b *testing.B) {
	old, oldGC := PackMin, GCInterval
	GCInterval = 1 << 30
	defer func() { PackMin, GCInterval = old, oldGC }()
	for _, k := range []int{1, 2, 4, 8, 16, 50} {
		for _, mode := range []string{"loose", "pack"} {
			b.Run(fmt.Sprintf("%d/%s", k, mode), func(b *testing.B) {
				PackMin = 1 << 30
				if mode == "pack" {
					PackMin = 1
				}
				_, s := benchRepo(b)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					chs := make([]state.Change, k)
					for j := range chs {
						chs[j] = change(fmt.Sprintf(".claude/f%02d.json", j), fmt.Sprintf(`{"n":%d}`, i), t0.Add(time.Duration(i)*time.Second))
					}
					if _, err := s.RecordEach(chs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(k), "µs/change")
			})
		}
	}
}
