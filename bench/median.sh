# Sourced by the bench scripts. median_ms CMD...: runs CMD $RUNS times (its
# output discarded, a failure fatal, naming $bench_name) and prints the median
# wall time in milliseconds. Needs $tmp (a scratch directory) and $RUNS.

now_ms() { echo $(($(date +%s%N) / 1000000)); }

median_ms() {
	local times=() start
	for ((r = 0; r < RUNS; r++)); do
		start=$(now_ms)
		if ! "$@" >/dev/null 2>"$tmp/err"; then
			echo "$bench_name: $* failed:" >&2
			head -20 "$tmp/err" >&2
			exit 1
		fi
		times+=($(($(now_ms) - start)))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
