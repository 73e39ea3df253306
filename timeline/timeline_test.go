package timeline

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A lane above Dense events is drawn as at most Buckets count markers; a
// page of 10 000 events stays small.
func TestRenderDense(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tl := &Timeline{Lanes: []string{LanePhases, LaneDecisions, LaneL1, LaneL2, LaneL3}}
	for i := 0; i < 10000; i++ {
		lane := LaneL1
		if i%100 == 0 {
			lane = LaneL2
		}
		tl.Events = append(tl.Events, Event{Lane: lane, Time: start.Add(time.Duration(i) * time.Minute), Kind: KindUpdate,
			Label: fmt.Sprintf("update f.json #%d", i), Detail: "--- a/f.json\n+++ b/f.json\n"})
	}
	tl.From, tl.To = start, start.Add(10000*time.Minute)
	var buf bytes.Buffer
	require.NoError(t, Render(&buf, tl))
	page := buf.String()
	require.Less(t, len(page), 4<<20)
	require.Equal(t, Buckets, strings.Count(page, "data-bucket="), "L1's 9 900 events in buckets")
	require.Equal(t, 100, strings.Count(page, "data-event="), "L2's 100 events one by one")
	require.Contains(t, page, `data-events="10000"`)
}

func TestCut(t *testing.T) {
	long := strings.Repeat("+line\n", MaxDiff)
	got := cut(long, "abc", "f.json")
	require.Less(t, len(got), MaxDiff+200)
	require.Contains(t, got, "strata show f.json --rev abc")
	require.Equal(t, "(no change in content)\n", cut("", "abc", "f.json"))
}
