package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/syncer"
)

// sync's restore hint for a decided path is a command to paste: pasted
// into bash it passes the path (the home file's "~/" expanded) and the
// commit as one argument each, and runs nothing else, whatever the path
// holds (note23 "Left alone": the home file's path was TermSafe, not a
// shell word).
func TestSyncRestoreHintPastes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	home, cwd := t.TempDir(), t.TempDir()
	loser := strings.Repeat("ab", 20)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ path, shown, want string }{
		{"memory/MEMORY.md", "~/.claude/projects/-tmp-r/memory/MEMORY.md", home + "/.claude/projects/-tmp-r/memory/MEMORY.md"},
		{"memory/MEMORY.md", "~/p/$(touch PWNED) x.md", home + "/p/$(touch PWNED) x.md"},
		{".claude/$(touch PWNED) y.json", "", ".claude/$(touch PWNED) y.json"},
	} {
		var out bytes.Buffer
		e := &env{In: strings.NewReader(""), Out: &out, Err: io.Discard}
		var shown func(string) string
		if tc.shown != "" {
			shown = func(p string) string {
				if p == tc.path {
					return tc.shown
				}
				return ""
			}
		}
		printSync(e, &syncer.Report{Remote: "origin", Decisions: []engine.MergePath{{Path: tc.path, ByTime: true, Loser: loser, LoserTime: at, WinnerTime: at.Add(time.Minute)}}}, shown)
		_, hint, ok := strings.Cut(out.String(), "restore with ")
		hint = strings.TrimSuffix(hint, "\n")
		if !ok || strings.Contains(hint, "\n") {
			t.Fatalf("%s: no one-line restore hint in %q", tc.path, out.String())
		}
		cmd := exec.Command(bash, "--norc", "-c", `printf '%s\n' `+hint)
		cmd.Dir, cmd.Env = cwd, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		got, err := cmd.Output()
		if want := "strata\nrestore\n" + tc.want + "\n--rev\n" + loser + "\n"; err != nil || string(got) != want {
			t.Errorf("%s: bash read the hint %s as %q (%v), want %q", tc.path, hint, got, err, want)
		}
	}
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Errorf("pasting the hints ran something: %v", ents)
	}
}
