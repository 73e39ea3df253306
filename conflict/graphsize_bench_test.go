package conflict

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// graphSides is a graph of n entities and n relations as base, and two
// sides' edits of it: half the entities changed on the earlier side, a
// third on the later, every relation retyped on the later side, and n/10
// new entities, second lines and other programs' lines on the earlier.
func graphSides(n int) (base, earlier, later []byte) {
	var b, e, l strings.Builder
	for i := 0; i < n; i++ {
		line := fmt.Sprintf(`{"type":"entity","name":"e%d","entityType":"t","observations":["o%d"]}`+"\n", i, i)
		b.WriteString(line)
		if i%2 == 0 {
			fmt.Fprintf(&e, `{"type":"entity","name":"e%d","entityType":"t","observations":["o%d","a"]}`+"\n", i, i)
		} else {
			e.WriteString(line)
		}
		if i%3 == 0 {
			fmt.Fprintf(&l, `{"type":"entity","name":"e%d","entityType":"t","observations":["o%d","b"]}`+"\n", i, i)
		} else {
			l.WriteString(line)
		}
	}
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf(`{"type":"relation","from":"e%d","to":"e%d","relationType":"r"}`+"\n", i, i+1)
		b.WriteString(rel)
		e.WriteString(rel)
		fmt.Fprintf(&l, `{"type":"relation","from":"e%d","to":"e%d","relationType":"s"}`+"\n", i, i+1)
	}
	for i := 0; i < n/10; i++ {
		fmt.Fprintf(&e, `{"type":"entity","name":"new%d","entityType":"t","observations":["x"]}`+"\n", i)
		fmt.Fprintf(&e, `{"type":"entity","name":"e%d","entityType":"t","observations":["dup"]}`+"\n", i)
		fmt.Fprintf(&e, "another program's line %d\n", i)
	}
	return []byte(b.String()), []byte(e.String()), []byte(l.String())
}

// BenchmarkMergeGraph merges two sides' edits of graphs of 4 000 and
// 40 000 entities (graphSides). The merge used to read, parse and join the
// file it builds again after each line it changed: 30 s for 4 000
// entities at 72b968d, ~4 s once lines were parsed once; it now splits and
// parses each file once (graph.Doc), and the ratio of the two sizes shows
// how the cost grows (10 for linear).
func BenchmarkMergeGraph(b *testing.B) {
	for _, n := range []int{4000, 40000} {
		bs, es, ls := graphSides(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				MergeGraph(bs, es, ls)
			}
		})
	}
}

// The graph merge's work grows with the size of the files, not with its
// square: merging four times the lines allocates less than six times the
// bytes (the merge that rebuilt the file after each changed line allocated
// sixteen times as much, as each of four times the edits copied a file four
// times as big). Memory counted, not time, so the check does not depend on
// the machine.
func TestMergeGraphGrowsLinearly(t *testing.T) {
	alloc := func(n int) uint64 {
		bs, es, ls := graphSides(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, _ := MergeGraph(bs, es, ls)
		runtime.ReadMemStats(&after)
		if !bytes.Contains(out, []byte(fmt.Sprintf(`"name":"new%d"`, n/10-1))) {
			t.Fatalf("%d: the earlier side's last new entity is missing", n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, big := alloc(500), alloc(2000)
	t.Logf("merging 500 entities allocated %d bytes, 2 000 allocated %d (%.1f times)", small, big, float64(big)/float64(small))
	if big > 6*small {
		t.Errorf("merging 500 entities allocated %d bytes, 2 000 allocated %d (%.1f times)", small, big, float64(big)/float64(small))
	}
}

// Past placeBudget line visits, the lines the earlier side added that are
// not the first of an entity or relation go at the end, unsearched: every
// one is kept, and a side with many thousands of them cannot make a merge
// take hours.
func TestMergeGraphPlaceBudget(t *testing.T) {
	defer func(b int) { placeBudget = b }(placeBudget)
	x := `{"type":"entity","name":"X","entityType":"t","observations":[]}`
	y := `{"type":"entity","name":"Y","entityType":"t","observations":[]}`
	base := x + "\n" + y + "\n"
	earlier := x + "\nafter X 1\nafter X 2\n" + y + "\nafter Y\n"
	for budget, want := range map[int]string{
		1 << 24: x + "\nafter X 1\nafter X 2\n" + y + "\nafter Y\n",
		1:       x + "\nafter X 1\n" + y + "\nafter X 2\nafter Y\n",
	} {
		placeBudget = budget
		if got, lost := MergeGraph([]byte(base), []byte(earlier), []byte(base)); string(got) != want || len(lost) > 0 {
			t.Errorf("budget %d: got %q, lost %v; want %q", budget, got, lost, want)
		}
	}
}
