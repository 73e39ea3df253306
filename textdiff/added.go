package textdiff

import "strings"

// Run is a run of consecutive lines that b adds to a.
type Run struct {
	At    int      // index in b of the run's first line
	Lines []string // the lines, each with its "\n" (the last line of b may lack it)
}

// Lines cuts data into lines that keep their "\n".
func Lines(data []byte) []string { return split(data) }

// Added returns the runs of lines that b adds to a, in b's order, by the
// same shortest edit script as Unified (past its edit limit, every line of b
// counts as added), with lines compared without their line ends: a file
// one side re-wrote with other line ends adds only its new lines (each run
// holds b's lines as they are, ends included).
func Added(a, b []byte) []Run {
	lb := split(b)
	var out []Run
	for _, o := range script(bare(split(a)), bare(lb)) {
		if o.kind != '+' {
			continue
		}
		line := lb[o.bi]
		if n := len(out); n > 0 && out[n-1].At+len(out[n-1].Lines) == o.bi {
			out[n-1].Lines = append(out[n-1].Lines, line)
			continue
		}
		out = append(out, Run{At: o.bi, Lines: []string{line}})
	}
	return out
}

// Kept maps each line of a to the line of b it stays as, -1 for a line b
// deletes, by the same shortest edit script as Unified, with lines compared
// without their line ends (a line that only gained or lost its "\n", or a
// "\r" before it, stays). Past its edit limit ok is false: which lines stay
// is then unknown, not "none".
func Kept(a, b []byte) (kept []int, ok bool) {
	la, lb := bare(split(a)), bare(split(b))
	ops, found := diff(la, lb)
	if !found {
		return nil, false
	}
	kept = make([]int, len(la))
	for i := range kept {
		kept[i] = -1
	}
	for _, o := range ops {
		if o.kind == ' ' {
			kept[o.ai] = o.bi
		}
	}
	return kept, true
}

// bare returns lines without their line ends.
func bare(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, "\r\n")
	}
	return out
}
