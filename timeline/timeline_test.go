package timeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
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
	// a path a remote named is one shell word in the command to copy
	require.Contains(t, cut(long, "abc", ".claude/$(touch PWNED) x.json"), "strata show '.claude/$(touch PWNED) x.json' --rev abc")
	require.Contains(t, leftOut(state.Entry{Path: ".claude/a;rm -rf ~.json", Commit: "c2", Parent: "c1"}, false), "strata diff '.claude/a;rm -rf ~.json' --from c1 --to c2")
	require.Contains(t, leftOut(state.Entry{Path: ".claude/`id`.json", Commit: "c2"}, true), "strata show '.claude/`id`.json' --rev c2")
}

// The page's policy lets only its own script run: script-src names the
// SHA-256 of the one script the page runs (its data block is JSON, never
// run), and nothing allows an inline script or handler at large.
func TestRenderPolicy(t *testing.T) {
	tl := &Timeline{Lanes: []string{LanePhases, LaneDecisions, LaneL1, LaneL2, LaneL3}}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, label := range []string{`update a.json`, `</script><script>alert(1)</script>`, `<svg onload="alert(1)">`} {
		tl.Events = append(tl.Events, Event{Lane: LaneL1, Time: start.Add(time.Duration(i) * time.Hour), Kind: KindUpdate, Label: label, Detail: label})
	}
	tl.From, tl.To = start, start.Add(2*time.Hour)
	var buf bytes.Buffer
	require.NoError(t, Render(&buf, tl))
	page := buf.String()

	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindAllStringSubmatch(page, -1)
	require.Len(t, m, 1, "one policy")
	policy := html.UnescapeString(m[0][1])
	require.Equal(t, Policy(), policy)
	require.NotContains(t, policy, "unsafe-eval")
	directives := map[string]string{}
	for _, d := range strings.Split(policy, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	require.Equal(t, "'none'", directives["default-src"])

	var run []string
	for _, s := range regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(page, -1) {
		if strings.Contains(s[1], `type="application/json"`) {
			continue
		}
		run = append(run, s[2])
	}
	require.Len(t, run, 1, "one script runs")
	sum := sha256.Sum256([]byte(run[0]))
	require.Equal(t, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", directives["script-src"], "script-src names the script's hash, and nothing else")
	require.Contains(t, run[0], `document.body.setAttribute("data-ready", "true")`)
}

// A record's label quotes what a remote wrote as log does: a page written
// to a terminal carries no escape sequence of theirs.
func TestRecordLabelQuotes(t *testing.T) {
	en := state.Entry{Action: "update\x1b]0;T\a", Path: ".claude/a\u202e.json", Source: "watch\x1b[2J", Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	got := recordLabel(en, true)
	require.NotRegexp(t, "[\x1b\a\u202e]", got)
	require.Contains(t, got, `rejected "update\x1b]0;T\a" ".claude/a\u202e.json" at `)
	require.Contains(t, got, `("watch\x1b[2J")`)
}
