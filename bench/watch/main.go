// Command watch benchmarks `strata watch` from the outside, as a user sees
// it: the latency from a file write to the moment the state ref moves, the
// sustained recording rate of a burst (checking that no change is lost), and
// the resident memory of an idle watcher keeping 10 000 files.
//
//	go run ./bench/watch -strata bin/strata
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	strataBin = flag.String("strata", "bin/strata", "the strata binary")
	changes   = flag.Int("n", 1000, "changes for the latency run")
	burst     = flag.Int("burst", 1000, "new files written in the burst")
	kept      = flag.Int("kept", 10000, "kept files for the idle memory run")
	debounce  = flag.Duration("debounce", 50*time.Millisecond, "the watcher's --debounce")
)

func main() {
	flag.Parse()
	bin, err := filepath.Abs(*strataBin)
	check(err)
	*strataBin = bin
	latency()
	throughput()
	idleRSS()
}

type repo struct {
	dir, home string
	env       []string
}

func newRepo() *repo {
	dir, err := os.MkdirTemp("", "strata-bench-watch-")
	check(err)
	home, err := os.MkdirTemp("", "strata-bench-home-")
	check(err)
	r := &repo{dir: dir, home: home, env: append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "MEMORY_FILE_PATH=",
		"GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")}
	r.run("git", "init", "-q")
	r.run("git", "commit", "-q", "--allow-empty", "-m", "base")
	// the files appear during the run, untracked: they live where a built-in
	// rule keeps state files (.claude/*.json), which a rule of .strata.yaml
	// alone would not keep without the user's strata.keepPrivate
	check(os.WriteFile(filepath.Join(dir, ".strata.yaml"), []byte("files:\n  - glob: .claude/*.json\n    class: workflow-state\n    schema: workflow-state\n"), 0o644))
	check(os.MkdirAll(filepath.Join(dir, ".claude"), 0o755))
	return r
}

func (r *repo) cleanup() { os.RemoveAll(r.dir); os.RemoveAll(r.home) }

func (r *repo) run(name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		os.Exit(1)
	}
	return strings.TrimSpace(string(out))
}

// startWatcher starts `strata watch` and waits until its catch-up is done
// (the "watching" line, then a quiet moment).
func (r *repo) startWatcher() *exec.Cmd {
	cmd := exec.Command(*strataBin, "-C", r.dir, "watch", "--debounce", debounce.String())
	cmd.Env = r.env
	pipe, err := cmd.StderrPipe()
	check(err)
	check(cmd.Start())
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		closed := false
		for sc.Scan() {
			if !closed && strings.Contains(sc.Text(), "msg=watching") {
				close(ready)
				closed = true
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "watcher not ready after 60s")
		os.Exit(1)
	}
	return cmd
}

func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Wait()
}

func doc(i, v int) []byte {
	return []byte(fmt.Sprintf("{\"type\": \"APEX\", \"phase\": \"p%d-v%d\", \"lastUpdated\": \"2026-11-22T10:00:00Z\"}\n", i, v))
}

func writeAtomic(name string, data []byte) {
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
	check(os.WriteFile(tmp, data, 0o644))
	check(os.Rename(tmp, name))
}

// refValue reads the loose state ref (the bench never packs refs).
func (r *repo) refValue() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, ".git", "refs", "strata", "state"))
	return string(b)
}

func latency() {
	r := newRepo()
	defer r.cleanup()
	w := r.startWatcher()
	defer stop(w)
	time.Sleep(200 * time.Millisecond)
	lat := make([]time.Duration, 0, *changes)
	for v := 0; v < *changes; v++ {
		before := r.refValue()
		name := filepath.Join(r.dir, ".claude", fmt.Sprintf("f%02d.json", v%20))
		t0 := time.Now()
		writeAtomic(name, doc(v%20, v))
		deadline := t0.Add(10 * time.Second)
		for r.refValue() == before {
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "change %d not recorded after 10s\n", v)
				os.Exit(1)
			}
			time.Sleep(200 * time.Microsecond)
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	target := *debounce + 20*time.Millisecond
	verdict := "met"
	if p(0.99) > target {
		verdict = "MISSED"
	}
	fmt.Printf("watch latency, %d changes, debounce %s: p50 %s, p99 %s, max %s (target p99 <= %s: %s)\n",
		len(lat), *debounce, ms(p(0.5)), ms(p(0.99)), ms(lat[len(lat)-1]), ms(target), verdict)
}

func throughput() {
	r := newRepo()
	defer r.cleanup()
	w := r.startWatcher()
	defer stop(w)
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	for i := 0; i < *burst; i++ {
		writeAtomic(filepath.Join(r.dir, ".claude", fmt.Sprintf("b%05d.json", i)), doc(i, 0))
	}
	// Then rewrite a tenth of them, so the burst also has updates.
	for i := 0; i < *burst; i += 10 {
		writeAtomic(filepath.Join(r.dir, ".claude", fmt.Sprintf("b%05d.json", i)), doc(i, 1))
	}
	writeDone := time.Since(t0)
	deadline := time.Now().Add(5 * time.Minute)
	for !r.headMatchesDisk() {
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "burst not fully recorded after 5 minutes")
			os.Exit(1)
		}
		time.Sleep(100 * time.Millisecond)
	}
	total := time.Since(t0)
	commits, _ := strconv.Atoi(r.run("git", "rev-list", "--count", "refs/strata/state"))
	fmt.Printf("watch burst: %d writes in %s, all %d files recorded as on disk after %s: %.0f commits/s, no change lost\n",
		*burst+*burst/10, ms(writeDone), *burst, ms(total), float64(commits)/total.Seconds())
}

// headMatchesDisk compares the ref's tree with the files on disk, by blob id.
func (r *repo) headMatchesDisk() bool {
	cmd := exec.Command("git", "ls-tree", "-r", "refs/strata/state", ".claude/")
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	recorded := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 4 {
			recorded[f[3]] = f[2]
		}
	}
	entries, _ := os.ReadDir(filepath.Join(r.dir, ".claude"))
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, ".claude/"+e.Name())
		}
	}
	if len(names) != len(recorded) {
		return false
	}
	h := exec.Command("git", "hash-object", "--stdin-paths")
	h.Dir, h.Env = r.dir, r.env
	h.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	ids, err := h.Output()
	if err != nil {
		return false
	}
	for i, id := range strings.Fields(string(ids)) {
		if recorded[names[i]] != id {
			return false
		}
	}
	return true
}

func idleRSS() {
	r := newRepo()
	defer r.cleanup()
	for i := 0; i < *kept; i++ {
		check(os.WriteFile(filepath.Join(r.dir, ".claude", fmt.Sprintf("k%05d.json", i)), doc(i, 0), 0o644))
	}
	r.run(*strataBin, "init")
	w := r.startWatcher()
	defer stop(w)
	time.Sleep(3 * time.Second) // idle
	rss := vmRSS(w.Process.Pid)
	verdict := "met"
	if rss > 30<<20 {
		verdict = "MISSED"
	}
	fmt.Printf("watch idle RSS with %d kept files: %.1f MB (target <= 30 MB: %s)\n", *kept, float64(rss)/(1<<20), verdict)
}

func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	check(err)
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := strings.Fields(string(rest))
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
