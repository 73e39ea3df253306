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

section "record one change: strata (go-git plumbing) vs the git CLI loop (hash-object, mktree, commit-tree, update-ref)"
echo "on $(df -T "$TMPDIR" | awk 'NR==2{print $2}') ($TMPDIR):"
run go test -run '^$' -bench 'BenchmarkRecord' -benchtime 2000x ./gitstore/ | grep -E 'bench_test.go.*ratio'
if [ -d /dev/shm ]; then
  echo "on tmpfs (the CPU-bound figure, no disk latency):"
  TMPDIR=/dev/shm run go test -run '^$' -bench 'BenchmarkRecord' -benchtime 2000x ./gitstore/ | grep -E 'bench_test.go.*ratio'
fi

section "show --at on a 100 000-commit history vs git log -1 --before + git show"
run go test -run '^$' -bench 'BenchmarkAtHistory100k' -benchtime 200x -timeout 20m ./gitstore/ | grep -E 'bench_test.go|ratio'
run bench/show_history.sh "$strata"

if [ -x bench/ajv_compare.sh ]; then
  section "strata validate of 1 000 files vs ajv-cli (whole process)"
  run bench/ajv_compare.sh "$strata"
fi

if [ -x scripts/bench_hook.sh ]; then
  section "pre-commit hook with 20 staged state files"
  run scripts/bench_hook.sh "$strata"
fi

section "sync of 1 000 changed paths between two clones vs git push + git fetch of the same ref"
run go test -run '^$' -bench 'BenchmarkSyncVsGitCLI' -benchtime 3x -timeout 20m ./syncer/ | grep -E '^Benchmark'

section "pre-commit hook, in-process check of 20 staged files"
run go test -run '^$' -bench 'BenchmarkPreCommit20' -benchtime 50x ./hooks/ | grep -E 'Benchmark'


section "blame of a 50-key file over 10 000 versions (target: under 200 ms)"
run go test -run '^$' -bench 'BenchmarkBlame50Keys10kVersions' -benchtime 3x -timeout 20m ./engine/ | grep -E '^Benchmark'

section "MCP server: strata_show once started (target: under 10 ms)"
run go test -run '^$' -bench 'BenchmarkShow' -benchtime 200x ./mcpserver/ | grep -E '^Benchmark'

section "strata watch: latency, burst, idle memory"
run go run ./bench/watch -strata "$strata"
exit $status
