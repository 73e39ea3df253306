package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/require"
)

// remoteInConfig answers yes only for a [remote "NAME"] section of the
// repository's own config that sets a key; every other spelling is left to
// git remote.
func TestRemoteInConfig(t *testing.T) {
	for _, c := range []struct {
		config string
		want   bool
	}{
		{"[remote \"origin\"]\n\turl = /x\n", true},
		{"[core]\n\tbare = false\n[Remote\t  \"origin\"]\r\nurl=/x\r\n", true},
		{"[remote \"origin\"]\n\t# url = /x\n\n; fetch\n[core]\n\tbare = false\n", false},
		{"[remote \"origin\"]\n", false},
		{"[remote \"origin2\"]\n\turl = /x\n", false},
		{"[remote \"Origin\"]\n\turl = /x\n", false},
		{"[remote.origin]\n\turl = /x\n", false},
		{"[remote \"origin\"] url = /x\n", false},
		{"[remotes \"origin\"]\n\turl = /x\n", false},
		{"[remote\"origin\"]\n\turl = /x\n", false},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config"), []byte(c.config), 0o644); err != nil {
			t.Fatal(err)
		}
		s := &Store{commonDir: dir}
		if got := s.remoteInConfig("origin"); got != c.want {
			t.Errorf("%q: remoteInConfig(origin) = %v, want %v", c.config, got, c.want)
		}
	}
	if (&Store{commonDir: t.TempDir()}).remoteInConfig("origin") {
		t.Error("no config file: remoteInConfig(origin) = true")
	}
}

// ResolveRemote takes a name as a configured remote exactly when git
// remote lists it, wherever it is configured: the repository's config, a
// file it includes (.git/remotes, as far as this git still reads it); any
// other name is a path.
func TestResolveRemoteAgreesWithGit(t *testing.T) {
	dir := realPath(t, t.TempDir())
	initRepo(t, dir, false)
	runGit(t, dir, "remote", "add", "origin", "/srv/origin.git")
	runGit(t, dir, "config", "include.path", "extra.config")
	writeFile(t, filepath.Join(dir, ".git", "extra.config"), "[remote \"inc\"]\n\turl = /srv/inc.git\n")
	writeFile(t, filepath.Join(dir, ".git", "remotes", "legacy"), "URL: /srv/legacy.git\n")
	listed := strings.Fields(runGit(t, dir, "remote"))
	if !slices.Contains(listed, "inc") || !slices.Contains(listed, "origin") {
		t.Fatalf("git remote lists %v, the test expects inc and origin (legacy: as this git reads .git/remotes)", listed)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"origin", "inc", "legacy", "nothere", "Origin"} {
		r, err := s.ResolveRemote(context.Background(), name, dir)
		if err != nil {
			t.Fatal(err)
		}
		configured := r.Arg == name
		if want := slices.Contains(listed, name); configured != want {
			t.Errorf("%s: resolved as %+v; git remote lists it: %v (%v)", name, r, want, listed)
		}
	}
}

// TestFetchStaleTrackingLock: a git fetch killed while it moved the
// tracking ref left its lock; once older than StaleLockAge it is taken
// over by the next fetch (before, every later sync failed "cannot lock
// ref"), while a fresh one, a concurrent fetch's, is left alone.
func TestFetchStaleTrackingLock(t *testing.T) {
	remote := newTestRepo(t, "plain")
	rs, err := Open(remote.open)
	require.NoError(t, err)
	mustRecord(t, rs, change(".claude/a.json", "{}", t0))
	local := newTestRepo(t, "plain")
	s, err := Open(local.open)
	require.NoError(t, err)
	ctx := context.Background()
	r, err := s.ResolveRemote(ctx, remote.main, local.main)
	require.NoError(t, err)
	lock := s.refFile(r.Ref) + ".lock"
	require.NoError(t, os.MkdirAll(filepath.Dir(lock), 0o755))
	require.NoError(t, os.WriteFile(lock, nil, 0o644))

	_, err = s.Fetch(ctx, r)
	require.Error(t, err, "a fresh lock is a live fetch's")
	_, serr := os.Lstat(lock)
	require.NoError(t, serr, "and stays")

	old := time.Now().Add(-2 * StaleLockAge)
	require.NoError(t, os.Chtimes(lock, old, old))
	head, err := s.Fetch(ctx, r)
	require.NoError(t, err)
	want, err := rs.Head(rs.StateRef())
	require.NoError(t, err)
	require.Equal(t, want, head)
	_, serr = os.Lstat(lock)
	require.True(t, errors.Is(serr, os.ErrNotExist), "the lock is gone")

	// strata's own moves of the tracking ref (after a push) take it over too
	timeout := LockTimeout
	t.Cleanup(func() { LockTimeout = timeout })
	LockTimeout = 200 * time.Millisecond
	require.NoError(t, os.WriteFile(lock, nil, 0o644))
	require.NoError(t, os.Chtimes(lock, old, old))
	require.NoError(t, s.setRef(r.Ref, plumbing.NewHash(head)))
}
