# Sourced by the bench scripts. median_ms CMD...: runs CMD $RUNS times (its
# output discarded, a failure fatal, naming $bench_name) and prints the median
# wall time in milliseconds. time_ms CMD... runs it once and prints its time;
# median_of N... prints the median of the numbers. Needs $tmp (a scratch
# directory) and $RUNS.

now_ms() { echo $(($(date +%s%N) / 1000000)); }

time_ms() {
	local start
	start=$(now_ms)
	if ! "$@" >/dev/null 2>"$tmp/err"; then
		echo "$bench_name: $* failed:" >&2
		head -20 "$tmp/err" >&2
		exit 1
	fi
	echo $(($(now_ms) - start))
}

median_of() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

median_ms() {
	local times=()
	for ((r = 0; r < RUNS; r++)); do
		times+=("$(time_ms "$@")")
	done
	median_of "${times[@]}"
}
