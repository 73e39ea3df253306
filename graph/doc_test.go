package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A Doc's batches and a Chain's insertions do exactly what insertLine and
// deleteLine do one line at a time (the merge's one-line edits, whose rules
// for CRLF files and a missing final newline they must keep): blocks of new
// lines anywhere, deletions of any set of lines from the last up, and lines
// put one by one before any line of a chain, on random files of blank,
// CRLF, entity and relation lines with and without a final newline.
func TestDocEditsAsOneLineAtATime(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	texts := []string{"", "x", "x\r", `{"type":"entity","name":"a","entityType":"t","observations":[]}`, `{"type":"relation","from":"a","to":"b","relationType":"r"}`, " "}
	file := func() string {
		var b strings.Builder
		for i := rnd.IntN(6); i > 0; i-- {
			b.WriteString(texts[rnd.IntN(len(texts))])
			b.WriteString([]string{"\n", "\r\n"}[rnd.IntN(2)])
		}
		if rnd.IntN(2) == 0 {
			b.WriteString(texts[1+rnd.IntN(len(texts)-1)])
		}
		return b.String()
	}
	some := func() [][]byte {
		var out [][]byte
		for i := 1 + rnd.IntN(3); i > 0; i-- {
			out = append(out, []byte(texts[rnd.IntN(len(texts))]))
		}
		return out
	}
	for n := 0; n < 20000; n++ {
		data := file()
		ls := splitLines([]byte(data))
		// a block
		at, add := rnd.IntN(len(ls)+1), some()
		want := slices.Clone(ls)
		for k, t := range add {
			want = insertLine(want, at+k, t)
		}
		d := NewDoc([]byte(data))
		d.insertBlock(at, add)
		check(t, "block", data, fmt.Sprint(at, add), d, want)
		// deletions
		del := make([]bool, len(ls))
		want = slices.Clone(ls)
		for i := len(ls) - 1; i >= 0; i-- {
			if del[i] = rnd.IntN(2) == 0; del[i] {
				want = deleteLine(want, i)
			}
		}
		d = NewDoc([]byte(data))
		d.deleteMarked(del)
		check(t, "delete", data, fmt.Sprint(del), d, want)
		// a chain
		d = NewDoc([]byte(data))
		c := d.Chain()
		want = slices.Clone(ls)
		var put []string
		for k := rnd.IntN(4); k > 0; k-- {
			i, text := rnd.IntN(len(want)+1), []byte(texts[rnd.IntN(len(texts))])
			node := c.Front()
			for j := 0; j < i; j++ {
				node = node.Next()
			}
			c.InsertBefore(node, text)
			want = insertLine(want, i, text)
			put = append(put, fmt.Sprintf("%d:%q", i, text))
		}
		for node := c.Front(); node != nil; node = node.Next() {
			if li := lineInfo(node.l.text, parseText(node.l.text)); string(node.Info.Text) != string(node.l.text) || node.Info.Key != li.Key {
				t.Fatalf("chain %s on %q: a line's Info is %+v, its line %q", strings.Join(put, " "), data, node.Info, node.l.text)
			}
		}
		c.Close()
		check(t, "chain", data, strings.Join(put, " "), d, want)
	}
}

func check(t *testing.T, what, data, edit string, d *Doc, want []line) {
	t.Helper()
	if got := string(d.Bytes()); got != string(joinLines(want)) {
		t.Fatalf("%s %s on %q: got %q, want %q", what, edit, data, got, joinLines(want))
	}
	for i, l := range d.ls {
		if p := parseText(l.text); p.kind != d.ps[i].kind || p.name != d.ps[i].name {
			t.Fatalf("%s %s on %q: line %d parsed as %+v, is %+v", what, edit, data, i, d.ps[i], p)
		}
	}
}
