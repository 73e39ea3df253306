package conflict

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkMergeGraph4000 merges two sides' edits of a 4 000-line graph
// (half the entities changed on one side, a third on the other, 400 new
// entities and 400 second lines on the earlier side). The line-level part
// of the merge reads the file it builds again after each line it changes,
// so it grows with the square of the lines: 30 s at 72b968d, 43 s after the
// member-keeping merge, ~4 s once lines are parsed once (graph.parseLine).
func BenchmarkMergeGraph4000(b *testing.B) {
	const n = 4000
	var base, earlier, later strings.Builder
	for i := 0; i < n; i++ {
		line := fmt.Sprintf(`{"type":"entity","name":"e%d","entityType":"t","observations":["o%d"]}`+"\n", i, i)
		base.WriteString(line)
		if i%2 == 0 {
			fmt.Fprintf(&earlier, `{"type":"entity","name":"e%d","entityType":"t","observations":["o%d","a"]}`+"\n", i, i)
		} else {
			earlier.WriteString(line)
		}
		if i%3 == 0 {
			fmt.Fprintf(&later, `{"type":"entity","name":"e%d","entityType":"t","observations":["o%d","b"]}`+"\n", i, i)
		} else {
			later.WriteString(line)
		}
	}
	for i := 0; i < n/10; i++ {
		fmt.Fprintf(&earlier, `{"type":"entity","name":"new%d","entityType":"t","observations":["x"]}`+"\n", i)
		fmt.Fprintf(&earlier, `{"type":"entity","name":"e%d","entityType":"t","observations":["dup"]}`+"\n", i)
	}
	bs, es, ls := []byte(base.String()), []byte(earlier.String()), []byte(later.String())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		MergeGraph(bs, es, ls)
	}
}
