package textdiff

// Run is a run of consecutive lines that b adds to a.
type Run struct {
	At    int      // index in b of the run's first line
	Lines []string // the lines, each with its "\n" (the last line of b may lack it)
}

// Lines cuts data into lines that keep their "\n".
func Lines(data []byte) []string { return split(data) }

// Added returns the runs of lines that b adds to a, in b's order, by the
// same shortest edit script as Unified (past its edit limit, every line of b
// counts as added).
func Added(a, b []byte) []Run {
	var out []Run
	for _, o := range script(split(a), split(b)) {
		if o.kind != '+' {
			continue
		}
		if n := len(out); n > 0 && out[n-1].At+len(out[n-1].Lines) == o.bi {
			out[n-1].Lines = append(out[n-1].Lines, o.text)
			continue
		}
		out = append(out, Run{At: o.bi, Lines: []string{o.text}})
	}
	return out
}
