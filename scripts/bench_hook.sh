#!/usr/bin/env bash
# Time `strata hooks run pre-commit` as git runs it: a whole process, in a
# repository with 20 staged state files (2 L1 files changed, 16 phase outputs
# and 2 Phase Outcomes added, 200 unrelated files committed). Prints the
# median of 10 runs against the target of issue 4.
#   $1 = the strata binary
set -euo pipefail
strata=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
runs=10
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME=$dir GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid \
  GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
cd "$dir"
git init -q repo
cd repo
mkdir -p .claude
echo '{"type": "APEX", "phase": "plan", "lastUpdated": "2026-11-22T09:00:00Z"}' > .claude/workflow-state.json
echo '{"name": "auth", "status": "created", "lastUpdated": "2026-11-22T09:00:00Z"}' > .claude/initiative.json
for i in $(seq -w 1 200); do mkdir -p "src/pkg$i" && echo 'package p' > "src/pkg$i/file.go"; done
git add -A && git commit -q -m initial
echo '{"type": "APEX", "phase": "implement", "lastUpdated": "2026-11-22T10:00:00Z"}' > .claude/workflow-state.json
echo '{"name": "auth", "status": "in_progress", "lastUpdated": "2026-11-22T10:00:00Z"}' > .claude/initiative.json
labels=(query strategy search extraction reading analysis validation report)
for session in 2026-11-22_auth 2026-11-22_billing; do
  mkdir -p "PhaseOutputs/$session"
  for n in 1 2 3 4 5 6 7 8; do
    label=${labels[$((n-1))]}
    cat > "PhaseOutputs/$session/phase-0$n-$label.json" <<JSON
{
  "\$schema": "phase-output-v2.0.0", "phase": $n, "tier_name": "$label", "tier_label": "$label",
  "workers_executed": [{"id": "W01", "name": "worker", "status": "completed", "duration_seconds": 12}],
  "started_at": "2026-11-22T09:00:00Z", "completed_at": "2026-11-22T09:00:12Z", "duration_seconds": 12,
  "memory_snapshot": {"query": "q"}, "quality_metrics": {"completeness": 1.0, "accuracy": 0.9, "tier_score": 0.95},
  "status": "completed", "errors": []
}
JSON
  done
done
mkdir -p PhaseOutcomes/auth
for p in 001-plan 002-implement; do
  cat > "PhaseOutcomes/auth/$p.yaml" <<YAML
phase: ${p#*-}
feature: auth
produced:
  - artifact: plan
    location: docs/plan.md
findings:
  - type: risk
    title: tokens in plain text
    reasoning: the session table keeps them
    proposed_category: in-scope-blocking
pending_decisions:
  - id: D-00${p:2:1}
    type: design
    question: rotate?
    options: [rotate, keep]
    recommended: rotate
    blocking: true
YAML
done
git add -A
staged=$(git diff --cached --name-only | wc -l)
[ "$staged" -eq 20 ] || { echo "bench_hook: expected 20 staged files, got $staged" >&2; exit 1; }
"$strata" hooks run pre-commit # warm the page cache; fails the script if the check fails
# The clock is bash's own ($EPOCHREALTIME, bash 5), read without a
# subshell: `date +%s%N` around the call timed a `date` process's start as
# well (session 29, same binary, four interleaved pairs: 45.6-50.5 ms with
# date, 34.9-43.0 ms with bash's clock). Without bash 5, date is the
# fallback.
clock() { if [ -n "${EPOCHREALTIME:-}" ]; then now=$EPOCHREALTIME; else now=$(date +%s.%6N); fi; now=${now/[.,]/}; now=$((10#$now)); }
times=()
for _ in $(seq $runs); do
  clock; t0=$now
  "$strata" hooks run pre-commit
  clock; t1=$now
  times+=($(( t1 - t0 )))
done
median_us=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}')
printf 'pre-commit hook, 20 staged files: %d.%d ms (target < 50 ms)\n' $((median_us / 1000)) $(( (median_us % 1000) / 100 ))
