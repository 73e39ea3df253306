package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// FuzzMatchedSources writes any bytes where worktree-head and the state
// ref's reflog are (a file planted, cut short, or written by another tool)
// and reads what strata's last move was: never a panic, and what Matched
// returns is always a commit this repository holds, or nothing (attack39
// H1: a damaged file must fall back, never name a head that is not there).
func FuzzMatchedSources(f *testing.F) {
	r := newTestRepo(f, "plain")
	s, err := Open(r.open)
	if err != nil {
		f.Fatal(err)
	}
	first := mustRecord(f, s, change("x.json", `{"v":1}`, t0))[0].Commit
	second := mustRecord(f, s, change("x.json", `{"v":2}`, t0.Add(time.Minute)))[0].Commit
	zero := strings.Repeat("0", 40)
	f.Add([]byte(first+" "+second+"\n"), []byte(zero+" "+first+" s <s> 1 +0000\tstrata\n"+first+" "+second+" s <s> 2 +0000\tpush\n"))
	f.Add([]byte(""), []byte(first+" "+second+" s <s> 2 +0000\tstrata\n"))
	f.Add([]byte("garbage"), []byte("garbage\tstrata\n"))
	f.Add([]byte(strings.Repeat("1", 40)+" "+strings.Repeat("2", 40)+"\n"), []byte(strings.Repeat("1", 40)+" "+strings.Repeat("2", 40)+" s <s> 2 +0000\tstrata"))
	f.Add([]byte(second+" "+second), []byte("\n\n\tstrata\n"))
	wh := s.matchedFile()
	log := s.logFile(s.StateRef())
	f.Fuzz(func(t *testing.T, file, reflog []byte) {
		if err := os.WriteFile(wh, file, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(log, reflog, 0o644); err != nil {
			t.Fatal(err)
		}
		from, to, ok := s.Matched()
		for _, h := range []string{from, to} {
			if h != "" && (!plumbing.IsHash(h) || !s.HasCommit(h)) {
				t.Fatalf("file %q, reflog %q: Matched named %q, no commit here", file, reflog, h)
			}
		}
		if !ok && (from != "" || to != "") {
			t.Fatalf("not known, yet %q %q", from, to)
		}
		_, _, _ = s.matched()
		_ = s.MatchedFileProblem()
		_ = s.FileHolds(second)
		_ = s.ReceivedPushes()
	})
}
