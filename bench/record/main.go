// Command record times `strata record` of N changed kept files in one call,
// whole process, against the git plumbing loop a gitwatch- or dura-style
// tool runs per change (git hash-object -w, one git mktree per tree level,
// git commit-tree, git update-ref with the old value), on the same files in
// the same run: every round changes all N files on both sides (untimed),
// then times each side, in alternating order. It prints the medians, the
// ratio and the load average. Used by scripts/bench.sh; runnable by hand:
//
//	go run ./bench/record -strata bin/strata [-n 200] [-rounds 5] [-dir DIR]
//
// The repositories go under -dir (default: TMPDIR): run it on the disk
// users keep repositories on, not only on tmpfs.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const config = `files:
  - glob: "state/*.json"
    class: workflow-state
    schema: workflow-state
`

func main() {
	strata := flag.String("strata", "bin/strata", "the strata binary")
	n := flag.Int("n", 200, "changed files per round")
	rounds := flag.Int("rounds", 5, "rounds")
	dir := flag.String("dir", os.TempDir(), "where the repositories go")
	target := flag.Float64("target", 20, "the ratio git / strata to reach")
	flag.Parse()
	bin, err := filepath.Abs(*strata)
	check(err)
	base, err := os.MkdirTemp(*dir, "strata-record-")
	check(err)
	defer os.RemoveAll(base)

	sRepo, gRepo := filepath.Join(base, "strata"), filepath.Join(base, "git")
	for _, r := range []string{sRepo, gRepo} {
		check(os.MkdirAll(filepath.Join(r, "state"), 0o755))
		run(r, nil, "git", "init", "-q")
		check(os.WriteFile(filepath.Join(r, ".strata.yaml"), []byte(config), 0o644))
		writeAll(r, *n, 0)
	}
	// the team's own files, committed: a rule of .strata.yaml keeps a file
	// a commit holds (an untracked or only staged one only with
	// strata.keepPrivate)
	run(sRepo, nil, "git", "add", "state")
	run(sRepo, nil, "git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "state")
	run(sRepo, nil, bin, "init")
	// The git side starts from the same snapshot on the same ref.
	run(gRepo, nil, "git", "add", "-A")
	tree := run(gRepo, nil, "git", "write-tree")
	parent := run(gRepo, []byte("init\n"), "git", "commit-tree", tree)
	const ref = "refs/strata/state"
	run(gRepo, nil, "git", "update-ref", ref, parent)
	root := run(gRepo, nil, "git", "ls-tree", ref)
	sub := strings.Split(run(gRepo, nil, "git", "ls-tree", ref+":state"), "\n")

	var st, gt []time.Duration
	load0 := loadavg()
	for r := 1; r <= *rounds; r++ {
		sides := []func(){
			func() {
				writeAll(sRepo, *n, r)
				before := count(sRepo, ref)
				t := time.Now()
				run(sRepo, nil, bin, "record")
				st = append(st, time.Since(t))
				if got := count(sRepo, ref) - before; got != *n {
					fail("strata record wrote %d commits, want %d", got, *n)
				}
			},
			func() {
				writeAll(gRepo, *n, r)
				t := time.Now()
				for i := 0; i < *n; i++ {
					name := fileName(i)
					blob := run(gRepo, nil, "git", "hash-object", "-w", "state/"+name)
					sub[i] = "100644 blob " + blob + "\t" + name
					subTree := run(gRepo, []byte(strings.Join(sub, "\n")+"\n"), "git", "mktree")
					rootTree := run(gRepo, []byte(replace(root, "state", "040000 tree "+subTree+"\tstate")), "git", "mktree")
					msg := "update state/" + name + "\n\nStrata-Path: state/" + name + "\nStrata-Action: update\n"
					commit := run(gRepo, []byte(msg), "git", "commit-tree", rootTree, "-p", parent)
					run(gRepo, nil, "git", "update-ref", ref, commit, parent)
					parent = commit
				}
				gt = append(gt, time.Since(t))
			},
		}
		if r%2 == 0 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		sides[0]()
		sides[1]()
	}
	sm, gm := median(st), median(gt)
	fmt.Printf("  %d rounds of %d changed files on %s (%s); load average %s at the start, %s at the end (2 cores)\n",
		*rounds, *n, fsType(base), base, load0, loadavg())
	fmt.Printf("  strata record  median %8.1f ms  (%.3f ms/change; min %.1f, max %.1f)\n", ms(sm), ms(sm)/float64(*n), ms(slices.Min(st)), ms(slices.Max(st)))
	fmt.Printf("  git loop       median %8.1f ms  (%.3f ms/change; min %.1f, max %.1f)\n", ms(gm), ms(gm)/float64(*n), ms(slices.Min(gt)), ms(slices.Max(gt)))
	ratio := ms(gm) / ms(sm)
	verdict := "met"
	if ratio < *target {
		verdict = "missed"
	}
	fmt.Printf("  ratio git / strata = %.1f× (target ≥ %g×: %s)\n", ratio, *target, verdict)
}

func fileName(i int) string { return fmt.Sprintf("ws-%04d.json", i) }

func writeAll(repo string, n, version int) {
	for i := 0; i < n; i++ {
		c := fmt.Sprintf(`{"type": "APEX", "phase": "plan", "lastUpdated": "2026-11-22T09:00:00Z", "ttl": "36500d", "context": "task %d, version %d"}`+"\n", i, version)
		check(os.WriteFile(filepath.Join(repo, "state", fileName(i)), []byte(c), 0o644))
	}
}

func replace(listing, name, line string) string {
	var out []string
	for _, l := range strings.Split(listing, "\n") {
		if strings.HasSuffix(l, "\t"+name) {
			l = line
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

func count(repo, ref string) int {
	n, err := strconv.Atoi(run(repo, nil, "git", "rev-list", "--count", ref))
	check(err)
	return n
}

func run(dir string, stdin []byte, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com",
		"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fail("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return f[0]
}

func fsType(dir string) string {
	var s syscall.Statfs_t
	if syscall.Statfs(dir, &s) != nil {
		return "?"
	}
	switch s.Type {
	case 0xEF53:
		return "ext4"
	case 0x01021994:
		return "tmpfs"
	case 0x794c7630:
		return "overlayfs"
	case 0x58465342:
		return "xfs"
	case 0x9123683e:
		return "btrfs"
	}
	return fmt.Sprintf("fs %#x", s.Type)
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "record: "+format+"\n", a...)
	os.Exit(1)
}
