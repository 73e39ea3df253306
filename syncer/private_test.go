package syncer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
	"github.com/strata-dev/strata/state"
)

const connPath = ".claude/conn.json"

// isolateGit keeps the user's own git configuration away from the git
// processes sync starts (they inherit the test's environment).
func isolateGit(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "no-such-gitconfig"))
	return home
}

// reopen opens m's engine afresh, as the next strata command does.
func (m *machine) reopen() {
	m.tb.Helper()
	eng, err := engine.Open(m.dir)
	if err != nil {
		m.tb.Fatal(err)
	}
	eng.Now = func() time.Time { return m.now }
	m.eng = eng
}

// syncRefused runs a sync that must refuse to publish exactly the paths
// want, and checks the remote did not move.
func (m *machine) syncRefused(remote string, want ...string) {
	m.tb.Helper()
	before := git(m.tb, remote, "rev-parse", "--verify", "-q", "refs/strata/state")
	_, err := Sync(context.Background(), m.eng, Options{Cwd: m.dir})
	var ps state.Problems
	if !errors.As(err, &ps) {
		m.tb.Fatalf("%s: sync returned %v, want the problems naming %v", m.name, err, want)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Path)
		if !strings.Contains(p.Message, "sync refuses to publish it, nothing was pushed") {
			m.tb.Errorf("%s: %s", p.Path, p.Message)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		m.tb.Fatalf("%s: sync refused %v, want %v", m.name, got, want)
	}
	if after := git(m.tb, remote, "rev-parse", "--verify", "-q", "refs/strata/state"); after != before {
		m.tb.Fatalf("%s: the remote moved from %s to %s", m.name, before, after)
	}
}

// F3: a file made private after it was published is pushed again only as
// the version the remote already holds. A new version of it (a secret added
// before the user ignored it) is refused even though the remote holds the
// path: the path name alone, which anyone who can push may plant there, no
// longer lets it out. So is a secret version recorded in between whose
// file was then put back as the remote has it. Once the only version of it
// to publish is the remote's, the sync pushes the other files' changes.
func TestNowPrivatePathPublishedOnlyAsRemoteVersion(t *testing.T) {
	isolateGit(t)
	w := newWorld(t, "a")
	a := w.ms[0]
	harmless := `{"endpoint": "x"}`
	a.write(connPath, harmless)
	a.record()
	a.sync()

	a.write(connPath, `{"endpoint": "x", "token": "SECRET-TOKEN"}`)
	a.record()
	writeFile(t, filepath.Join(a.dir, ".gitignore"), []byte(connPath+"\n"))
	a.reopen()
	if why := a.eng.Config().Private(connPath); why == "" {
		t.Fatalf("%s is not private", connPath)
	}
	a.syncRefused(w.remote, connPath)
	if strings.Contains(git(t, w.remote, "log", "-p", "refs/strata/state"), "SECRET") {
		t.Fatal("the secret reached the remote")
	}

	// The file back as the remote holds it: the head's tree agrees with the
	// remote, but a commit the remote lacks still holds the secret.
	writeFile(t, filepath.Join(a.dir, ".gitignore"), nil)
	a.reopen()
	a.write(connPath, harmless)
	a.record()
	writeFile(t, filepath.Join(a.dir, ".gitignore"), []byte(connPath+"\n"))
	a.reopen()
	a.syncRefused(w.remote, connPath)
	if strings.Contains(git(t, w.remote, "log", "-p", "refs/strata/state"), "SECRET") {
		t.Fatal("the secret reached the remote")
	}
}

// A now-private path whose only version to publish is the one the remote
// holds does not stop the sync: the other files' changes are pushed.
func TestNowPrivatePathAtRemoteVersionDoesNotBlock(t *testing.T) {
	isolateGit(t)
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(connPath, `{"endpoint": "x"}`)
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync()
	writeFile(t, filepath.Join(a.dir, ".gitignore"), []byte(connPath+"\n"))
	a.reopen()
	a.write(wsPath, ws("implement"))
	a.record()
	if _, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.remote, "show", "refs/strata/state:"+wsPath); got != strings.TrimSpace(ws("implement")) {
		t.Fatalf("remote holds %q", got)
	}
}

// F2, the last door: whatever the in-process matcher says (here it misses
// everything, as it missed core.ignorecase and an included
// core.excludesFile), a file git check-ignore calls ignored is refused at the
// push, in the sync that pushes first and in the one that fetches; a rule
// naming it exactly publishes it.
func TestSyncAsksGitWhatItIgnores(t *testing.T) {
	home := isolateGit(t)
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync() // the remote has the state ref: the next sync pushes first

	git(t, a.dir, "config", "core.ignorecase", "true")
	writeFile(t, filepath.Join(a.dir, ".gitignore"), []byte(".claude/Secrets.json\n"))
	excl := filepath.Join(home, "excl")
	writeFile(t, excl, []byte("token.json\n"))
	inc := filepath.Join(home, "inc.cfg")
	writeFile(t, inc, []byte("[core]\n\texcludesFile = "+excl+"\n"))
	git(t, a.dir, "config", "include.path", inc)
	a.eng.Config().Ignored = func(string) bool { return false } // a matcher that disagrees with git
	a.write(".claude/secrets.json", `{"apiKey": "SECRET-A"}`)
	a.write(".claude/token.json", `{"token": "SECRET-B"}`)
	a.write(wsPath, ws("implement"))
	a.record()
	a.syncRefused(w.remote, ".claude/secrets.json", ".claude/token.json")
	if strings.Contains(git(t, w.remote, "log", "-p", "refs/strata/state"), "SECRET") {
		t.Fatal("a secret reached the remote")
	}

	git(t, a.dir, "config", "--add", "strata.keepPrivate", ".claude/token.json")
	git(t, a.dir, "config", "--add", "strata.keepPrivate", ".claude/secrets.json")
	a.reopen()
	a.eng.Config().Ignored = func(string) bool { return false }
	if _, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir}); err != nil {
		t.Fatalf("kept by strata.keepPrivate, still refused: %v", err)
	}
	if got := git(t, w.remote, "show", "refs/strata/state:.claude/token.json"); got != `{"token": "SECRET-B"}` {
		t.Fatalf("remote holds %q", got)
	}
}

// The same last door for files git filters (a clean/smudge driver, as
// git-crypt sets up: git publishes only the cleaned form): whatever the
// in-process reading says, a file git check-attr gives a filter driver is
// refused at the push, its plaintext never reaches the remote; the user's
// strata.keepPrivate publishes it.
func TestSyncAsksGitWhatItFilters(t *testing.T) {
	isolateGit(t)
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync() // the remote has the state ref: the next sync pushes first

	git(t, a.dir, "config", "filter.crypt.clean", "tr a-z n-za-m")
	git(t, a.dir, "config", "filter.crypt.smudge", "tr a-z n-za-m")
	writeFile(t, filepath.Join(a.dir, ".claude", ".gitattributes"), []byte("settings.json filter=crypt\n"))
	a.eng.Config().Filter = func(string) string { return "" } // a reading that disagrees with git
	a.write(".claude/settings.json", `{"env": {"KEY": "secret-a"}}`)
	a.write(wsPath, ws("implement"))
	a.record()
	a.syncRefused(w.remote, ".claude/settings.json")
	if strings.Contains(git(t, w.remote, "log", "-p", "refs/strata/state"), "secret-a") {
		t.Fatal("a secret reached the remote")
	}

	git(t, a.dir, "config", "--add", "strata.keepPrivate", ".claude/settings.json")
	a.reopen()
	if _, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir}); err != nil {
		t.Fatalf("kept by strata.keepPrivate, still refused: %v", err)
	}
	if got := git(t, w.remote, "show", "refs/strata/state:.claude/settings.json"); got != `{"env": {"KEY": "secret-a"}}` {
		t.Fatalf("remote holds %q", got)
	}
}

// A recorded path whose folder has become a symbolic link inside the work
// tree is one git will not consider ("beyond a symbolic link"): the sync
// still pushes it, answering for it with the in-process rules.
func TestSyncPushesPathBeyondSymlink(t *testing.T) {
	isolateGit(t)
	w := newWorld(t, "a")
	a := w.ms[0]
	a.write(wsPath, ws("plan"))
	a.record()
	a.sync()
	a.write(wsPath, ws("implement"))
	a.record()
	if err := os.Rename(filepath.Join(a.dir, ".claude"), filepath.Join(a.dir, "real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(a.dir, ".claude")); err != nil {
		t.Fatal(err)
	}
	if _, err := Sync(context.Background(), a.eng, Options{Cwd: a.dir}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.remote, "show", "refs/strata/state:"+wsPath); got != strings.TrimSpace(ws("implement")) {
		t.Fatalf("remote holds %q", got)
	}
}
