#!/usr/bin/env bash
# make fuzz: run every Fuzz target of the module for $1 (default 20s) each.
# Seeds come from each package's testdata and, where present, ../shared/corpus.
set -euo pipefail
fuzztime=${1:-20s}
cd "$(dirname "$0")/.."
fail=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "== $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" || fail=1
  done
done
exit $fail
