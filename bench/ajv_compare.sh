#!/usr/bin/env bash
# ajv_compare.sh STRATA_BINARY
#
# Compares whole-process validation of 1 000 workflow-state files by
# `strata validate` and by ajv-cli (the common JSON Schema CLI), each the
# median of 5 runs on this machine, and prints
#   validate 1000 files: strata X ms, ajv-cli Y ms, ratio Z×
# docs/contract.md §14 wants Z >= 5. If npm or its registry is unreachable, it prints a
# skip line and exits 0. Environment: N (files, default 1000), RUNS (default 5).
set -euo pipefail

STRATA=${1:?usage: bench/ajv_compare.sh STRATA_BINARY}
N=${N:-1000}
RUNS=${RUNS:-5}
here=$(cd "$(dirname "$0")" && pwd)
case $STRATA in
/*) ;;
*) STRATA=$PWD/$STRATA ;;
esac
[[ -x $STRATA ]] || { echo "ajv_compare: $STRATA is not an executable" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	echo "validate $N files: skipped, npm/node not installed"
	exit 0
fi
if ! npm install --prefix "$tmp/npm" --no-audit --no-fund --no-save --silent ajv-cli@5 ajv-formats >/dev/null 2>&1; then
	echo "validate $N files: skipped, cannot install ajv-cli from the npm registry"
	exit 0
fi
ajv=$tmp/npm/node_modules/.bin/ajv

# A repository whose .strata.yaml keeps state/*.json as workflow-state.
repo=$tmp/repo
mkdir -p "$repo/state"
git -C "$repo" init -q
cat >"$repo/.strata.yaml" <<'YAML'
files:
  - glob: "state/*.json"
    class: workflow-state
    schema: workflow-state
YAML

# N valid, varied files: every workflow type, cleared states, histories,
# enforcement blocks with and without blocking violations.
types=(APEX ONESHOT DEBUG BRAINSTORM)
phases=(plan implement review fix design)
severities=(LOW MEDIUM HIGH CRITICAL)
for ((i = 0; i < N; i++)); do
	f=$repo/state/ws-$i.json
	if ((i % 10 == 9)); then
		echo '{}' >"$f"
		continue
	fi
	t=${types[i % 4]} p=${phases[i % 5]} s=${severities[i % 4]}
	blocking=false
	[[ $s == HIGH || $s == CRITICAL ]] && blocking=true
	day=$(printf '%02d' $((i % 28 + 1)))
	status='"status": "in_progress"'
	((i % 7 == 0)) && status='"status": "completed", "completedAt": "2026-02-'$day'T18:00:00Z"'
	cat >"$f" <<JSON
{
  "type": "$t",
  "phase": "$p",
  "lastUpdated": "2026-02-${day}T12:$(printf '%02d' $((i % 60))):00Z",
  "ttl": "$((i % 48 + 1))h",
  "context": "task $i: ${p} the module number $i",
  "startedAt": "2026-02-${day}T09:00:00+01:00",
  $status,
  "phases": [
    {"name": "plan", "startedAt": "2026-02-${day}T09:00:00Z", "completedAt": "2026-02-${day}T10:00:00Z", "approved": true},
    {"name": "$p", "startedAt": "2026-02-${day}T10:00:00Z"}
  ],
  "enforcement": {
    "violations": [{"code": "V-TEST-$((i % 99))", "severity": "$s", "details": "check $i"}],
    "blocking": $blocking,
    "summary": "1 violation"
  },
  "agent": {"session": "s-$i", "tokens": $((i * 37))}
}
JSON
done

# The files are the team's own, committed to git: a rule of .strata.yaml
# keeps a file git has in a commit (an untracked or only staged one only
# with strata.keepPrivate).
git -C "$repo" add state
git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q -m state

# Our schema, as strata exports it for editors (or from the source tree).
mkdir -p "$tmp/schemas"
if ! "$STRATA" schema export "$tmp/schemas" >/dev/null 2>&1 || [[ ! -f $tmp/schemas/workflow-state.schema.json ]]; then
	cp "$here/../schemas/workflow-state.schema.json" "$tmp/schemas/"
fi
schema=$tmp/schemas/workflow-state.schema.json

bench_name=ajv_compare
# shellcheck source=bench/median.sh
. "$here/median.sh"

run_strata() { (cd "$repo" && "$STRATA" validate state/*.json); }
# ajv-cli resolves -c modules from the working directory.
run_ajv() { (cd "$tmp/npm" && "$ajv" validate --spec=draft2020 -c ajv-formats --strict=false -s "$schema" -d "$repo/state/*.json"); }

strata_ms=$(median_ms run_strata)
if [[ -z $strata_ms ]]; then
	echo "validate $N files: strata failed (above); no ratio"
	exit 1
fi
ajv_ms=$(median_ms run_ajv)
ratio=$(awk -v a="$ajv_ms" -v s="$strata_ms" 'BEGIN {if (s < 1) s = 1; printf "%.1f", a / s}')
echo "validate $N files: strata $strata_ms ms, ajv-cli $ajv_ms ms, ratio ${ratio}×"
