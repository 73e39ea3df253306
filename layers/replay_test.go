package layers

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// placeOwed puts a replayed line before the first protocol line a later
// record wrote, and never moves, doubles or removes any other line
// (attack23-verify 1).
func TestPlaceOwed(t *testing.T) {
	const (
		a     = "Active APEX workflow: p1 completed, entering p2 ctx"
		owed  = "Active APEX workflow: p2 completed, entering p3 ctx"
		c     = "Active APEX workflow: p3 completed, entering p4 ctx"
		e     = "Expired workflow: APEX at p4 for ctx"
		head  = "# Memory\n\n## Workflow state\n"
		other = "Completed APEX for old: done"
	)
	sec := func(items ...string) string { return head + "- " + strings.Join(items, "\n- ") + "\n" }
	for _, tc := range []struct {
		name   string
		before []string
		src    string
		want   string
	}{
		{"no later line: at the end", nil, sec(a), sec(a, owed)},
		{"before the later record's line", []string{c}, sec(a, c), sec(a, owed, c)},
		{"before the first of the later lines", []string{c, e}, sec(a, c, e), sec(a, owed, c, e)},
		{"a later line not written: before the next", []string{c, e}, sec(a, e), sec(a, owed, e)},
		{"before an expiry", []string{e}, sec(a, e), sec(a, owed, e)},
		{"the user's line after stays after", []string{c}, sec(a, c, "my note"), sec(a, owed, c, "my note")},
		{"the user's line before stays before", []string{c}, sec(a, "my note", c), sec(a, "my note", owed, c)},
		{"written before the kill: stays", []string{c}, sec(a, owed, c), sec(a, owed, c)},
		{"written, then the user's line: stays", []string{c}, sec(a, owed, "my note", c), sec(a, owed, "my note", c)},
		{"an older copy: moved", []string{c}, sec(owed, a, c), sec(a, owed, c)},
		{"written again by a later record: left", []string{owed, c}, sec(a, c, owed), sec(a, c, owed)},
		{"the last line, nothing later: stays", nil, sec(other, owed, "my note"), sec(other, owed, "my note")},
		{"an older copy, nothing later: moved to the end", nil, sec(owed, a), sec(a, owed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := placeOwed([]byte(tc.src), placed{text: owed, before: tc.before})
			if err != nil || string(got) != tc.want {
				t.Errorf("placeOwed = %v\n%s\nwant\n%s", err, got, tc.want)
			}
		})
	}
}

// A step the killed watcher owed, and steps recorded with the protocol
// before the watcher came back (resume's TTL check, record --layers):
// the replayed line goes before theirs, and MEMORY.md ends with the
// latest step, as without the kill (attack23-verify 1).
func TestReplayPutsTheOwedLineBeforeLaterOnes(t *testing.T) {
	const (
		implementing = "- Active APEX workflow: plan completed, implementing auth\n"
		reviewing    = "- Active APEX workflow: implement completed, reviewing auth\n"
		fixing       = "- Active APEX workflow: review completed, fixing auth\n"
		expired      = "- Expired workflow: APEX at fix for auth\n"
	)
	for _, tc := range []struct {
		name  string
		after func(r *testRepo, a *Agent)
		want  string
	}{
		{"record --layers", func(r *testRepo, a *Agent) {
			if _, err := a.AfterRecord(r.step(`{"type":"APEX","phase":"fix","context":"auth","lastUpdated":"2026-11-22T10:00:03Z"}`+"\n", state.SourceRecord)); err != nil {
				t.Fatal(err)
			}
		}, implementing + reviewing + fixing},
		{"record --layers, then the TTL", func(r *testRepo, a *Agent) {
			if _, err := a.AfterRecord(r.step(`{"type":"APEX","phase":"fix","context":"auth","lastUpdated":"2026-11-22T10:00:03Z"}`+"\n", state.SourceRecord)); err != nil {
				t.Fatal(err)
			}
			r.now = r.now.Add(48 * time.Hour)
			if x, _, err := a.Expire(state.SourceRecord); err != nil || x == nil {
				t.Fatalf("Expire = %+v, %v; want it expired", x, err)
			}
		}, implementing + reviewing + fixing + expired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRepo(t)
			r.write(memoryPath, []byte("# Memory\n"))
			r.write(".claude/memory.jsonl", nil)
			r.write(WorkflowStatePath, []byte(`{"type":"APEX","phase":"plan","context":"auth","lastUpdated":"2026-11-22T10:00:00Z"}`+"\n"))
			r.open()
			r.recordAll()
			a := New(r.eng, func(m string) { t.Errorf("warning: %s", m) })
			if _, err := a.AfterRecord(r.step(`{"type":"APEX","phase":"implement","context":"auth","lastUpdated":"2026-11-22T10:00:01Z"}`+"\n", state.SourceWatch)); err != nil {
				t.Fatal(err)
			}
			base, err := r.eng.Head()
			if err != nil {
				t.Fatal(err)
			}
			r.step(`{"type":"APEX","phase":"review","context":"auth","lastUpdated":"2026-11-22T10:00:02Z"}`+"\n", state.SourceWatch) // the killed watcher's
			tc.after(r, a)
			if _, err := New(r.eng, func(m string) { t.Errorf("warning: %s", m) }).Replay(base, state.SourceWatch); err != nil {
				t.Fatal(err)
			}
			if got, want := string(r.read(memoryPath)), "# Memory\n\n## Workflow state\n"+tc.want; got != want {
				t.Errorf("MEMORY.md:\n%s\nwant\n%s", got, want)
			}
		})
	}
}
