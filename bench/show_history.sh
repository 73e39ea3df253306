#!/usr/bin/env bash
# Whole-process `strata show PATH --at T` on a 100 000-commit history vs
# `git log -1 --before=T -- PATH` + `git show`, the history built with
# git fast-import. $1 = the strata binary. Prints medians of 5 runs.
set -euo pipefail
strata=$1
n=${N:-100000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-show-XXXXXX")
trap 'rm -rf "$dir"' EXIT
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
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
"$strata" show "$path" --at "$T" >/dev/null   # first call builds strata's index (a cache)
s=$(for i in 1 2 3 4 5; do ms "$strata" show "$path" --at "$T"; done | median)
g=$(for i in 1 2 3 4 5; do
  t0=$(date +%s%N)
  h=$(git log -1 --format=%H --before="$T" refs/strata/state -- "$path")
  git show "$h:$path" >/dev/null
  t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 ))
done | median)
want=$(git show "$(git log -1 --format=%H --before="$T" refs/strata/state -- "$path"):$path")
got=$("$strata" show "$path" --at "$T")
[ "$got" = "$want" ] || { echo "strata and git disagree: $got vs $want"; exit 1; }
echo "show --at on $n commits (whole process): strata $s ms, git log -1 --before + git show $g ms, ratio $(awk -v a="$g" -v b="$s" 'BEGIN{printf "%.1f", a/(b>0?b:1)}')× (same bytes)"
# strata at T: the agent's whole context at the same moment (every kept
# file of the snapshot, the layers, the report); target: within 2× of show --at.
a=$(for i in 1 2 3 4 5; do ms "$strata" at "$T"; done | median)
echo "at T on $n commits (whole process): strata at $a ms, strata show --at $s ms, ratio $(awk -v a="$a" -v b="$s" 'BEGIN{printf "%.1f", a/(b>0?b:1)}')×"
