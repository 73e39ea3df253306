#!/usr/bin/env bash
# make run: build strata (done by make), then run its main job on a repository.
#   $1 = the strata binary, $2 = DIR (optional; default: ./sandbox). A DIR that
#   does not exist yet (or is empty) is created as a git repository and seeded
#   with the example state files of testdata/example.
set -euo pipefail
strata=$1
dir=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$dir" ] || dir=$here/sandbox
if [ ! -e "$dir" ] || { [ -d "$dir" ] && [ -z "$(ls -A "$dir")" ]; }; then
  echo "creating a sandbox repository in $dir"
  mkdir -p "$dir"
  git -C "$dir" init -q
  cp -R "$here/testdata/example/." "$dir/"
  # A fresh lastUpdated, so the 24h TTL does not expire the example at once.
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  sed -i.bak "s/\"lastUpdated\": \"[^\"]*\"/\"lastUpdated\": \"$now\"/" "$dir/.claude/workflow-state.json" "$dir/.claude/initiative.json"
  rm -f "$dir"/.claude/*.bak
  git -C "$dir" -c user.name=sandbox -c user.email=sandbox@example.invalid commit -q --allow-empty -m "sandbox"
fi
if ! git -C "$dir" rev-parse --git-dir >/dev/null 2>&1; then
  echo "$dir is not a git repository; initialising it"
  git -C "$dir" init -q
fi
"$strata" -C "$dir" init
"$strata" -C "$dir" status
cat <<TRY

strata is now watching $dir (Ctrl-C stops it). In another terminal, try:
  cd $dir
  sed -i 's/"implement"/"review"/' .claude/workflow-state.json
  $strata log .claude/workflow-state.json        # its versions, newest first
  $strata diff .claude/workflow-state.json --from \$($strata log .claude/workflow-state.json --json -n 2 | grep -o '[0-9a-f]\{40\}' | tail -1)
  $strata resume                                 # what a new agent session is told
  echo '{"type": "WATERFALL"}' > .claude/workflow-state.json   # rejected at once, kept on refs/strata/rejected
  $strata restore .claude/workflow-state.json    # back to the last valid version
TRY
# The watcher is the main job: it runs until Ctrl-C (SIGINT) or SIGTERM.
exec "$strata" -C "$dir" watch
