#!/usr/bin/env bash
# status_compare.sh STRATA_BINARY
#
# Compares whole-process `strata status` of N kept workflow-state files
# (recorded by init, then a tenth of them changed and recorded one at a time)
# with `strata validate` of the same files, each the median of RUNS runs in
# this run, the two alternating, and prints
#   status 1000 files: X ms, validate Y ms, ratio Z× (target <= 2×)
# docs/contract.md §14 wants Z <= 2. Environment: N (default 1000), RUNS (default 11).
set -euo pipefail

STRATA=${1:?usage: bench/status_compare.sh STRATA_BINARY}
N=${N:-1000}
RUNS=${RUNS:-11}
case $STRATA in
/*) ;;
*) STRATA=$PWD/$STRATA ;;
esac
[[ -x $STRATA ]] || { echo "status_compare: $STRATA is not an executable" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
mkdir -p "$repo/state"
git -C "$repo" init -q
cat >"$repo/.strata.yaml" <<'YAML'
files:
  - glob: "state/*.json"
    class: workflow-state
    schema: workflow-state
YAML
ws() { printf '{"type": "APEX", "phase": "plan", "lastUpdated": "2026-11-22T09:00:00Z", "ttl": "36500d", "context": "task %s, version %s"}\n' "$1" "$2"; }
for ((i = 0; i < N; i++)); do
	ws "$i" 0 >"$repo/state/ws-$(printf %04d "$i").json"
done
cd "$repo"
# the team's own files, committed to git: a rule of .strata.yaml keeps a
# file git has in a commit (an untracked or only staged one only with
# strata.keepPrivate)
git add state
git -c user.name=bench -c user.email=bench@example.com commit -q -m state
"$STRATA" init >/dev/null
for ((i = 0; i < N; i += 10)); do
	f=state/ws-$(printf %04d "$i").json
	ws "$i" 1 >"$f"
	"$STRATA" record "$f" >/dev/null
done

bench_name=status_compare
# shellcheck source=bench/median.sh
. "$here/median.sh"

# The two alternate, so a background repack the records started, or a busy
# moment of the machine, falls on either.
st=() vt=()
for ((r = 0; r < RUNS; r++)); do
	st+=("$(time_ms "$STRATA" status)")
	vt+=("$(time_ms "$STRATA" validate state/*.json)")
done
status_ms=$(median_of "${st[@]}")
validate_ms=$(median_of "${vt[@]}")
ratio=$(awk -v s="$status_ms" -v v="$validate_ms" 'BEGIN {if (v < 1) v = 1; printf "%.2f", s / v}')
echo "status $N files: $status_ms ms, validate $validate_ms ms, ratio ${ratio}× (target <= 2×)"
awk -v r="$ratio" 'BEGIN {exit !(r <= 2)}' || { echo "status_compare: status is more than 2× validate" >&2; exit 1; }
