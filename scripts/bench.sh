#!/usr/bin/env bash
# make bench: every performance target of docs/contract.md §14, each measured against its
# peer in the same run, printed as figures and ratios. $1 = the strata binary.
# Benchmarks whose peer cannot be installed (npm unreachable) say so and go on.
set -uo pipefail
strata=$1
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
status=0
section() { printf '\n== %s\n' "$1"; }
run() { "$@" || { echo "(failed: $*)"; status=1; }; }

# Repositories for the Go benchmarks live on the disk this checkout is on
# (where users keep repositories), not in /tmp, unless TMPDIR is set.
mkdir -p .bench
export TMPDIR=${TMPDIR:-$here/.bench}

section "start-up: strata version and validate --hook on one kept file vs git status --porcelain (whole process, interleaved)"
# Targets from the issue, as ratios to git in the same run (git took 3.3 ms when
# they were set): version ≤ 4 ms (1.2× git), validate --hook ≤ 6 ms (1.8× git).
# How fast a binary starts depends on how its pages sit in the page cache: a file
# just written (a copy) starts faster than the same bytes read back from disk
# (on this VM: git 2.0 vs 2.1 ms, strata 3.7-3.9 vs 4.5-5.0 ms; /usr/bin/git, read
# from disk long ago, took 2.5-3.4 ms). So both binaries are copied side by side
# and measured twice in the same state: as fresh copies (as make install leaves
# them), then dropped from the page cache and read back from disk (as after a
# reboot). Each target is judged in both.
hookdir=$(mktemp -d "$TMPDIR/strata-hook-XXXXXX")
( cd "$hookdir" && git init -q && git -c user.email=b@example.com -c user.name=b commit -q --allow-empty -m init &&
  mkdir -p .claude && cp "$here/testdata/example/.claude/workflow-state.json" .claude/ && "$strata" init >/dev/null &&
  printf '{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Write","cwd":"%s","tool_input":{"file_path":"%s/.claude/workflow-state.json"}}' "$hookdir" "$hookdir" >hook.json )
# gofloor is a Go program that does nothing, built as strata is: what any Go
# program pays to start (the runtime's CPU probing, cgroup limit, heap and
# threads), shown beside git and strata with no target of its own.
mkdir -p "$hookdir/bin"
CGO_ENABLED=0 go build -o "$hookdir/gofloor.link" ./bench/gofloor
cp "$strata" "$hookdir/bin/strata" && cp "$(command -v git)" "$hookdir/bin/git" && cp "$hookdir/gofloor.link" "$hookdir/bin/gofloor"
s=$hookdir/bin/strata g=$hookdir/bin/git f=$hookdir/bin/gofloor
startup() {
  run go run ./bench/vs -runs 61 -dir "$hookdir" -ratio version=git:1.2 -ratio hook=git:1.8 -show gofloor=git -show version=gofloor \
    "version=$s version" "hook=$s validate --hook <$hookdir/hook.json" "git=$g status --porcelain" "gofloor=$f"
}
echo "fresh copies of the binaries:"
startup
sync "$s" "$g" "$f" && for b in "$s" "$g" "$f"; do dd if="$b" iflag=nocache count=0 status=none; done
echo "all dropped from the page cache, read back from disk:"
startup
rm -rf "$hookdir"

# The sync runs before the sections that create and delete thousands of files:
# right after many deletions, creating a file on this ext4 disk is several
# times slower for minutes, which weighs on strata's 1 000 file writes far
# more than on git's few. Its fixtures are kept (STRATA_BENCH_KEEP) until
# every section has run, so the next section does not start right after
# their deletion either; BenchmarkBatchNewFiles, which deletes what it
# creates, comes after the record sections for the same reason.
kept=$(mktemp -d "$TMPDIR/strata-bench-kept-XXXXXX")
trap 'rm -rf "$kept" ${shm:+"$shm"}' EXIT
section "sync of 1 000 changed paths between two clones vs git push + git fetch of the same ref (target strata/git ≤ 1.5): new files (SyncVsGitCLI), the same into a clone that has no .claude folder yet (SyncFreshVsGitCLI), then new versions of files the receiver holds (SyncReplace), the same with each version in a commit of its own as record and the watcher write them (SyncReplacePerPath); floor-ms = a plain loop creating, or rewriting in place, the same 1 000 files on this disk"
echo "on $(df -T "$TMPDIR" | awk 'NR==2{print $2}') ($TMPDIR):"
TMPDIR=$kept STRATA_BENCH_KEEP=1 run go test -run '^$' -bench 'BenchmarkSync(Fresh|Replace|ReplacePerPath)?VsGitCLI' -benchtime 3x -timeout 20m ./syncer/ | grep -E '^Benchmark|creating a file'
if [ "$(df -T /dev/shm 2>/dev/null | awk 'NR==2{print $2}')" = tmpfs ]; then
  # how far the disk's file creation bounds the rows: the same work with no disk
  echo "on tmpfs (/dev/shm: no disk latency; what is left is CPU, both sides):"
  shm=$(mktemp -d /dev/shm/strata-bench-sync-XXXXXX)
  TMPDIR=$shm STRATA_BENCH_KEEP=1 run go test -run '^$' -bench 'BenchmarkSync(Fresh|Replace|ReplacePerPath)?VsGitCLI' -benchtime 3x -timeout 20m ./syncer/ | grep -E '^Benchmark'
  rm -rf "$shm"
fi

section "record one change: strata (in-process Record) vs the git CLI loop (hash-object, mktree, commit-tree, update-ref)"
echo "on $(df -T "$TMPDIR" | awk 'NR==2{print $2}') ($TMPDIR):"
run go test -run '^$' -bench 'BenchmarkRecord(GitCLI)?$' -benchtime 2000x ./gitstore/ | grep -E 'bench_test.go.*(ratio|disk floor)'
if [ -d /dev/shm ]; then
  echo "on tmpfs (the CPU-bound figure, no disk latency):"
  TMPDIR=/dev/shm run go test -run '^$' -bench 'BenchmarkRecord(GitCLI)?$' -benchtime 2000x ./gitstore/ | grep -E 'bench_test.go.*(ratio|disk floor)'
fi

section "strata record of 200 changed files in one call vs the git plumbing loop per change (whole process, alternating rounds)"
run go run ./bench/record -strata "$strata" -dir "$TMPDIR"

section "the sync's writes of files it creates: unnamed temp files linked into place (AddNew) vs named ones renamed (Add), 1 000 files, same run"
run go test -run '^$' -bench 'BenchmarkBatchNewFiles' -benchtime 10x ./atomicfile/ | grep -E '^Benchmark'

section ".git after 10 000 recorded changes (background gc and repack as they run) vs the same after git gc"
run go test -run '^$' -bench 'BenchmarkGitSize10k' -benchtime 1x -timeout 30m ./gitstore/ | grep -E 'size_bench_test.go'

section "show --at on a 100 000-commit history vs git log -1 --before + git show"
run go test -run '^$' -bench 'BenchmarkAtHistory100k' -benchtime 200x -timeout 20m ./gitstore/ | grep -E 'bench_test.go|ratio'
run bench/show_history.sh "$strata"

if [ -x bench/ajv_compare.sh ]; then
  section "strata validate of 1 000 files vs ajv-cli (whole process)"
  run bench/ajv_compare.sh "$strata"
fi

section "strata status of 1 000 kept files vs strata validate of the same files (whole process)"
run bench/status_compare.sh "$strata"
run go test -run '^$' -bench 'BenchmarkStatus1000' -benchtime 20x ./engine/ | grep -E 'status_bench_test.go'

if [ -x scripts/bench_hook.sh ]; then
  section "pre-commit hook with 20 staged state files"
  run scripts/bench_hook.sh "$strata"
fi


section "pre-commit hook, in-process check of 20 staged files"
run go test -run '^$' -bench 'BenchmarkPreCommit20' -benchtime 50x ./hooks/ | grep -E 'Benchmark'


section "blame of a 50-key file over 10 000 versions (target: under 200 ms)"
run go test -run '^$' -bench 'BenchmarkBlame50Keys10kVersions' -benchtime 20x -timeout 20m ./engine/ | grep -E '^Benchmark'

section "MCP server: strata_show once started (target: under 10 ms)"
run go test -run '^$' -bench 'BenchmarkShow' -benchtime 200x ./mcpserver/ | grep -E '^Benchmark'

section "strata watch: latency, burst, idle memory"
run go run ./bench/watch -strata "$strata"

# Last: it takes minutes, and its gc's deletions would slow the disk for the
# sections after it.
section ".git after 100 000 recorded changes vs the same after git gc (the original contract's target ≤ 1.5×; ~4 minutes)"
run go test -run '^$' -bench 'BenchmarkGitSize100k' -benchtime 1x -timeout 60m ./gitstore/ | grep -E 'size_bench_test.go'
exit $status
