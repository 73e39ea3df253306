#!/usr/bin/env bash
# make fuzz: run every Fuzz target of the module for $1 (default 20s) each.
# Seeds come from each package's testdata and, where present, ../shared/corpus.
#
# A failure of the fuzz function always says why, indented under its
# "--- FAIL" line (the message, the input written to testdata/fuzz/...).
# Go's fuzz engine also fails slow targets (one input taking ~1 s, as
# FuzzSyncHostileTree's real git repositories do) with a bare "--- FAIL" and
# nothing under it (golang/go#56238), or with only "context deadline
# exceeded" under it (a worker late at the deadline, seen on a loaded
# 2-core machine); such a run is tried once more, and said so, so that only
# an engine failure seen twice fails.
set -euo pipefail
fuzztime=${1:-20s}
cd "$(dirname "$0")/.."
fail=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "== $pkg $target ($fuzztime)"
    out=$(mktemp)
    if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$out"; then
      rm -f "$out"
      continue
    fi
    # a real failure says why, indented, under its --- FAIL, and writes its
    # input; the engine's own (a bare FAIL, or "context deadline exceeded"
    # when a worker answers late at the end of -fuzztime) says nothing else
    if ! grep '^    ' "$out" | grep -qv '^    context deadline exceeded$'; then
      echo "(the fuzz engine failed with no failing input: trying $target once more)"
      go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" || fail=1
    else
      fail=1
    fi
    rm -f "$out"
  done
done
exit $fail
