// Package textdiff renders the difference between two versions of a file as
// a unified diff, the format `git diff` and `diff -u` print. It compares
// lines with the Myers algorithm and keeps every byte: a missing final
// newline is shown with git's "\ No newline at end of file" marker.
package textdiff

import (
	"bytes"
	"fmt"
	"strings"
)

// maxEdit bounds the Myers search (D, the number of lines removed plus
// added); beyond it the whole file is shown as replaced. The search keeps
// O(D²) diagonals, so the bound keeps a diff of two unrelated 10 MB files to a
// few megabytes and milliseconds.
const maxEdit = 2000

// Unified returns a unified diff of a and b with the given number of context
// lines, or "" when they are equal. Labels name the two sides. The lines
// both files start with, up to the context of the first change, are not
// searched and hold no edit op, the lines share one copy of each file, and
// a whole replacement (past the edit bound) is written as it is found: a
// diff of two big versions held ~115 times a 10 MB file's size.
func Unified(labelA, labelB string, a, b []byte, context int) string {
	if bytes.Equal(a, b) {
		return ""
	}
	x, y := split(a), split(b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", labelA, labelB)
	// the equal lines the files start with, less the context the hunks
	// show: the search would only follow them (its first snake), so the
	// script of the rest is the same (the equal lines they end with are
	// not left out: the search may match some of them to other lines)
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	p = max(p-context, 0)
	ops, found := diff(x[p:], y[p:])
	if !found { // too different: everything out, everything in, as one hunk
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", rng(0, len(x)), rng(0, len(y)))
		for _, l := range x {
			writeLine(&out, '-', l)
		}
		for _, l := range y {
			writeLine(&out, '+', l)
		}
		return out.String()
	}
	for _, h := range hunks(ops, context) {
		ai, bi, al, bl := h.bounds()
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", rng(ai+p, al), rng(bi+p, bl))
		for _, o := range h {
			writeLine(&out, o.kind, o.text)
		}
	}
	return out.String()
}

// writeLine writes one line of a hunk: its kind, the line without its
// "\n", and git's marker when it had none.
func writeLine(out *strings.Builder, kind byte, line string) {
	out.WriteByte(kind)
	out.WriteString(strings.TrimSuffix(line, "\n"))
	out.WriteByte('\n')
	if !strings.HasSuffix(line, "\n") {
		out.WriteString("\\ No newline at end of file\n")
	}
}

func rng(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// split cuts data into lines that keep their "\n", all sharing one copy
// of data.
func split(data []byte) []string {
	text := string(data)
	lines := make([]string, 0, bytes.Count(data, []byte{'\n'})+1)
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

type op struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // line index in a and b before this op
}

// script is diff with a whole replacement past the edit bound: every line
// of a out, then every line of b in.
func script(a, b []string) []op {
	ops, found := diff(a, b)
	if found {
		return ops
	}
	ops = make([]op, 0, len(a)+len(b))
	for i, l := range a {
		ops = append(ops, op{'-', l, i, 0})
	}
	for j, l := range b {
		ops = append(ops, op{'+', l, len(a), j})
	}
	return ops
}

// diff is the Myers O(ND) shortest edit script, with the edit distance
// capped; found is false past the cap (ops is then nil).
func diff(a, b []string) (ops []op, found bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdit)
	// v[k+off] is the furthest x on diagonal k; trace[d] keeps the diagonals
	// -d..d as they were before step d, which is all the backtrack needs.
	off := limit + 1
	v := make([]int, 2*off+1)
	var trace [][]int
	for d := 0; d <= limit && !found; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	if !found {
		return nil, false
	}
	// Backtrack through the saved frontiers: at step d, diagonal k of the
	// snapshot is at index k+d.
	var rev []op
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		vv := trace[d]
		at := func(k int) int { return vv[k+d] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		var px int
		if d > 0 {
			px = at(pk)
		}
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, op{' ', a[x], x, y})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, op{'+', b[y], x, y})
			} else {
				x--
				rev = append(rev, op{'-', a[x], x, y})
			}
		}
		x, y = px, py
	}
	ops = make([]op, len(rev))
	for i := range rev {
		ops[i] = rev[len(rev)-1-i]
	}
	return ops, true
}

type hunk []op

func (h hunk) bounds() (ai, bi, al, bl int) {
	ai, bi = h[0].ai, h[0].bi
	for _, o := range h {
		if o.kind != '+' {
			al++
		}
		if o.kind != '-' {
			bl++
		}
	}
	return
}

// hunks groups changes with up to context unchanged lines around them.
func hunks(ops []op, context int) []hunk {
	var out []hunk
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		out = append(out, hunk(ops[start:end]))
		i = end
	}
	return out
}
