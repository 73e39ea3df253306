#!/usr/bin/env bash
# make bench: every performance target of SPEC §10, each measured against its
# peer in the same run, printed as figures and ratios. $1 = the strata binary.
# Benchmarks whose peer cannot be installed (npm unreachable) say so and go on.
set -uo pipefail
strata=$1
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
status=0
section() { printf '\n== %s\n' "$1"; }
run() { "$@" || { echo "(failed: $*)"; status=1; }; }

section "record one change: strata (go-git plumbing) vs the git CLI loop"
run go test -run '^$' -bench 'BenchmarkRecord' -benchtime 2000x ./gitstore/ | grep -E 'Benchmark|ratio'

section "show --at on a 100 000-commit history vs git log -1 --before + git show"
run go test -run '^$' -bench 'BenchmarkAtHistory100k' -benchtime 200x -timeout 20m ./gitstore/ | grep -E 'Benchmark|ratio'

if [ -x bench/ajv_compare.sh ]; then
  section "strata validate of 1 000 files vs ajv-cli (whole process)"
  run bench/ajv_compare.sh "$strata"
fi

if [ -x scripts/bench_hook.sh ]; then
  section "pre-commit hook with 20 staged state files"
  run scripts/bench_hook.sh "$strata"
fi

if [ -x scripts/bench_sync.sh ]; then
  section "sync of 1 000 changed paths vs git fetch + git push"
  run scripts/bench_sync.sh "$strata"
fi

section "strata watch: latency, burst, idle memory"
run go run ./bench/watch -strata "$strata"
exit $status
