#!/bin/bash
# chaos.sh: A appends MEMORY.md lines and graph entities and syncs into B
# (B is A's origin, its work tree kept by strata); B appends its own and runs
# strata commands killed at random; WATCH=1 runs `strata watch` in B.
# env: N (iterations of A), SEED, WATCH=1, FM=1 (front matter in MEMORY.md),
# DOUBLE=1 (B writes each line/entity in two write calls), PAUSE (seconds
# between those two writes, e.g. 0.3, longer than the watcher's debounce;
# default under 50 ms), GLUE=1 (A appends with a plain `echo >>`, even onto
# a version that ends without its newline: a half line of B's taken by A's
# sync shows as A's line glued to it), CMDS=0 (B runs no strata commands of
# its own: only the watcher records, so that no `strata record` between two
# writes records a half line, which it does by design), S (strata binary:
# strata on PATH, else bin/strata of this clone). At the end B records and A
# syncs, twice, and every line and entity A wrote is looked for on B's disk,
# B's ref and A's disk: "LOST where: what" for each one missing (B's own:
# "LOSTB"), then "result RUNDIR seed=… fail=0|1"; exit 1 when A lost any.
# The run's folder keeps both repositories, iter.log (what each side did,
# when), watch.log, async.log, bcmd.log, final.log. Not part of make test:
# a run takes a minute or more and its races are the machine's. Usage:
#   make build && for s in 1 2 3; do SEED=$s WATCH=1 FM=1 DOUBLE=1 N=20 bash scripts/chaos/chaos.sh; done
set -u
S=${S:-$(command -v strata || echo "$(cd "$(dirname "$0")/../.." && pwd)/bin/strata")}
N=${N:-30}
SEED=${SEED:-$$}
RANDOM=$SEED
R=$(mktemp -d "${TMPDIR:-/tmp}/strata-chaos.XXXX")
echo "run $R seed $SEED" >&2
cd $R
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x
git init -q b
cd b
mkdir -p .claude
if [ "${FM:-}" = 1 ]; then printf -- '---\ntitle: m\n---\n' > MEMORY.md; fi
printf '# Memory\n\n## Learnings\n- base\n' >> MEMORY.md
echo '{"type":"entity","name":"base","entityType":"t","observations":["o"]}' > .claude/memory.jsonl
$S init > $R/binit.log 2>&1 || { echo "b init failed"; exit 2; }
cd $R
git clone -q b a 2>/dev/null
cd a
$S sync > $R/async0.log 2>&1 || { echo "a first sync failed"; cat $R/async0.log; exit 2; }
if [ "${WATCH:-}" = 1 ]; then
  (cd $R/b && exec $S watch --debounce 50ms > $R/watch.log 2>&1) &
  WPID=$!
fi
# A: appends and syncs, N times
(
  cd $R/a
  for i in $(seq 1 $N); do
    # a version recorded mid-write on B can end without its final newline:
    # an append onto it would glue the line to B's half line (the driver's
    # own doing, not strata's)
    if [ "${GLUE:-}" != 1 ]; then
      [ -n "$(tail -c1 MEMORY.md)" ] && echo >> MEMORY.md
      [ -n "$(tail -c1 .claude/memory.jsonl)" ] && echo >> .claude/memory.jsonl
    fi
    echo "- A$i" >> MEMORY.md
    echo "{\"type\":\"entity\",\"name\":\"A$i\",\"entityType\":\"t\",\"observations\":[\"o\"]}" >> .claude/memory.jsonl
    echo "{\"type\":\"entity\",\"name\":\"A${i}x\",\"entityType\":\"t\",\"observations\":[\"o\"]}" >> .claude/memory.jsonl
    for t in 1 2 3 4 5; do
      if $S sync >> $R/async.log 2>&1; then break; fi
      sleep 0.2
    done
    echo "A $i synced $(date +%T.%N)" >> $R/iter.log
    sleep 0.$((RANDOM % 3))$((RANDOM % 10))
  done
  touch $R/a.done
) &
APID=$!
# B: appends and killed commands while A runs
j=0
cd $R/b
w() { # append $2 to $1, in one or two writes
  if [ "${DOUBLE:-}" = 1 ]; then
    local h=$(( ${#2} / 2 ))
    printf '%s' "${2:0:$h}" >> "$1"; sleep ${PAUSE:-0.0$((RANDOM % 5))}; printf '%s\n' "${2:$h}" >> "$1"
  else
    printf '%s\n' "$2" >> "$1"
  fi
}
while [ ! -e $R/a.done ]; do
  j=$((j+1))
  w MEMORY.md "- B$j"
  w .claude/memory.jsonl "{\"type\":\"entity\",\"name\":\"B$j\",\"entityType\":\"t\",\"observations\":[\"o\"]}"
  echo "B $j wrote $(date +%T.%N)" >> $R/iter.log
  if [ "${CMDS:-1}" != 0 ] && { [ "${WATCH:-}" != 1 ] || [ $((RANDOM % 3)) = 0 ]; }; then
    case $((RANDOM % 4)) in
      0|1) cmd="record" ;; 2) cmd="status" ;; 3) cmd="validate" ;;
    esac
    $S $cmd >> $R/bcmd.log 2>&1 &
    p=$!
    sleep 0.$((RANDOM % 3))$((RANDOM % 10))
    kill -9 $p 2>/dev/null && echo "B killed $cmd $(date +%T.%N)" >> $R/iter.log
    wait $p 2>/dev/null
  fi
  sleep 0.$((1 + RANDOM % 4))$((RANDOM % 10))
done
wait $APID
if [ -n "${WPID:-}" ]; then sleep 1.5; kill -TERM $WPID; wait $WPID; fi
# settle: B records, A syncs, B records
cd $R/b && $S record >> $R/final.log 2>&1
cd $R/a && $S sync >> $R/final.log 2>&1
cd $R/b && $S record >> $R/final.log 2>&1
cd $R/a && $S sync >> $R/final.log 2>&1
cd $R/b && $S record >> $R/final.log 2>&1
fail=0
check() { # where, content
  local where=$1 c=$2 i
  for i in $(seq 1 $N); do
    grep -qx -- "- A$i" <<<"$c" || { echo "LOST $where: line A$i"; fail=1; }
    grep -q "\"name\":\"A$i\"" <<<"$c" || { echo "LOST $where: entity A$i"; fail=1; }
    grep -q "\"name\":\"A${i}x\"" <<<"$c" || { echo "LOST $where: entity A${i}x"; fail=1; }
  done
  for i in $(seq 1 $j); do
    grep -qx -- "- B$i" <<<"$c" || { echo "LOSTB $where: line B$i"; }
    grep -q "\"name\":\"B$i\"" <<<"$c" || { echo "LOSTB $where: entity B$i"; }
  done
}
check b-disk "$(cat $R/b/MEMORY.md $R/b/.claude/memory.jsonl)"
check b-ref "$(git -C $R/b show refs/strata/state:MEMORY.md refs/strata/state:.claude/memory.jsonl)"
check a-disk "$(cat $R/a/MEMORY.md $R/a/.claude/memory.jsonl)"
echo "result $R seed=$SEED N=$N j=$j fail=$fail"
exit $fail
