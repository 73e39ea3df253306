#!/usr/bin/env bash
# Whole-process `strata show PATH --at T` on a 100 000-commit history vs
# `git log -1 --before=T -- PATH` + `git show`, the history built with
# git fast-import, and vs `git rev-list -1 --before=T` + `git show` (the faster
# git way: commits hold full snapshots, so no path filter is needed), both
# after git gc and a commit-graph with changed-path Bloom filters.
# $1 = the strata binary. Prints medians of interleaved runs (bench/vs).
set -euo pipefail
strata=$1
here=$(cd "$(dirname "$0")/.." && pwd)
n=${N:-100000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-show-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
cd "$dir"
git init -q
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com
start=1700000000
awk -v n="$n" -v start="$start" 'BEGIN {
  for (i = 1; i <= n; i++) {
    p = sprintf(".claude/f%d.json", i % 10)
    data = sprintf("{\"i\": %d}\n", i)
    msg = sprintf("update %s\n\nStrata-Path: %s\nStrata-Action: update\nStrata-Class: claude-json\nStrata-Source: record\nStrata-Schema: json\n", p, p)
    printf "commit refs/strata/state\ncommitter strata <strata@localhost> %d +0000\ndata %d\n%s", start + i, length(msg), msg
    printf "M 100644 inline %s\ndata %d\n%s\n", p, length(data), data
  }
}' | git fast-import --quiet
path=.claude/f3.json
at=$((start + n / 2))
T=$(date -u -d "@$at" +%Y-%m-%dT%H:%M:%SZ)
want=$(git show "$(git log -1 --format=%H --before="$T" refs/strata/state -- "$path"):$path")
got=$("$strata" show "$path" --at "$T")
[ "$got" = "$want" ] || { echo "strata and git disagree: $got vs $want"; exit 1; }
# git at its best: packed, with a commit-graph carrying changed-path Bloom filters.
git gc --quiet
git commit-graph write --reachable --changed-paths
"$strata" show "$path" --at "$T" >/dev/null   # first call builds strata's index (a cache)
echo "show --at on $n commits, whole process, after git gc + commit-graph (same bytes):"
(cd "$here" && go run ./bench/vs -runs "${RUNS:-21}" -dir "$dir" -ratio strata=rev-list:0.2 \
  "strata=$strata show $path --at $T" \
  "rev-list=git rev-list -1 --before=$T refs/strata/state && git show {}:$path" \
  "log-path=git log -1 --format=%H --before=$T refs/strata/state -- $path && git show {}:$path")
# strata at T: the agent's whole context at the same moment (every kept file
# of the snapshot, the layers, the report); target: within 2x of show --at.
echo "at T vs show --at on $n commits, whole process:"
(cd "$here" && go run ./bench/vs -runs "${RUNS:-11}" -dir "$dir" -ratio at=show:2 \
  "at=$strata at $T" \
  "show=$strata show $path --at $T")
