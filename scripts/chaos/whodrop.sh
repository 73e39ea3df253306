#!/bin/bash
# whodrop.sh FILE LINE: run in a repository, lists the commits of
# refs/strata/state whose FILE lacks LINE (a whole line) while a parent's
# held it, with their Strata-Source and Strata-Time: where a chaos run's
# lost line went (bash scripts/chaos/whodrop.sh MEMORY.md "- A7").
f=$1; pat=$2
has() { git show "$1:$f" 2>/dev/null | grep -qx -- "$pat" && echo 1 || echo 0; }
git rev-list --parents refs/strata/state | while read c ps; do
  hc=$(has $c)
  [ $hc = 1 ] && continue
  for p in $ps; do
    if [ $(has $p) = 1 ]; then echo "$(git log -1 --format='%h %ad %s' --date=format:%T $c) (parent $(git rev-parse --short $p) held it) src=$(git log -1 --format=%b $c | grep Strata-Source | cut -d' ' -f2) time=$(git log -1 --format=%b $c | grep Strata-Time | cut -d' ' -f2)"; fi
  done
done
