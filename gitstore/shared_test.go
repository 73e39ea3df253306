package gitstore

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

// TestSharedRepositoryModes records in a repository under each
// core.sharedRepository value and checks that every file and directory
// strata created in .git has the mode git gives the same kind of thing it
// creates in the same repository: a ref and its directory (git update-ref),
// a reflog, a loose object and its fan-out directory (git hash-object -w),
// a pack and its index (git pack-objects).
func TestSharedRepositoryModes(t *testing.T) {
	for _, v := range []string{"umask", "false", "group", "true", "1", "all", "world", "everybody", "2", "0660", "0640", "0600", "0664"} {
		t.Run(v, func(t *testing.T) {
			dir := realPath(t, t.TempDir())
			initRepo(t, dir, true)
			runGit(t, dir, "config", "core.sharedRepository", v)
			runGit(t, dir, "config", "core.logAllRefUpdates", "always")
			before := gitPaths(t, dir)

			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			mustRecord(t, s, change(".claude/workflow-state.json", `{"a":1}`, t0)) // loose objects
			var batch []state.Change
			for i := range 4 {
				batch = append(batch, change(fmt.Sprintf(".claude/f%d.json", i), fmt.Sprintf(`{"f":%d}`, i), t0.Add(1)))
			}
			if _, err := s.RecordEach(batch); err != nil { // one pack
				t.Fatal(err)
			}
			if _, err := s.Log(s.StateRef(), LogQuery{}); err != nil { // the time index
				t.Fatal(err)
			}
			WaitHousekeeping()
			created := map[string]bool{}
			for p := range gitPaths(t, dir) {
				if !before[p] {
					created[p] = true
				}
			}

			// What git makes of the same kinds of file, in the same repository.
			head := runGit(t, dir, "rev-parse", "HEAD")
			runGit(t, dir, "update-ref", "refs/gitmade/x", head)
			gitRef := modeOf(t, dir, ".git/refs/gitmade/x")
			gitDir := modeOf(t, dir, ".git/refs/gitmade")
			if got := modeOf(t, dir, ".git/logs/refs/gitmade/x"); got != gitRef {
				t.Fatalf("git's reflog %v and ref %v differ", got, gitRef)
			}
			var obj string
			for i := 0; ; i++ {
				h, _ := gitOut(dir, []byte(fmt.Sprint("probe ", i)), "hash-object", "--stdin")
				if _, err := os.Stat(filepath.Join(dir, ".git", "objects", h[:2])); os.IsNotExist(err) {
					obj = gitStdin(t, dir, fmt.Sprint("probe ", i), "hash-object", "-w", "--stdin")
					break
				}
			}
			gitObj := modeOf(t, dir, ".git/objects/"+obj[:2]+"/"+obj[2:])
			if got := modeOf(t, dir, ".git/objects/"+obj[:2]); got != gitDir {
				t.Fatalf("git's fan-out directory %v and ref directory %v differ", got, gitDir)
			}
			pack := gitStdin(t, dir, head+"\n", "pack-objects", "-q", ".git/objects/pack/pack")
			gitPack := modeOf(t, dir, ".git/objects/pack/pack-"+pack+".pack")
			if got := modeOf(t, dir, ".git/objects/pack/pack-"+pack+".idx"); got != gitPack {
				t.Fatalf("git's pack %v and index %v differ", gitPack, got)
			}

			var objects, packs, refs, dirs int
			for p := range created {
				got := modeOf(t, dir, p)
				want, kind := gitRef, "file"
				switch {
				case got.IsDir():
					want, kind = gitDir, "directory"
					dirs++
				case strings.HasPrefix(p, ".git/objects/pack/"):
					want, kind = gitPack, "pack"
					packs++
				case strings.HasPrefix(p, ".git/objects/"):
					want, kind = gitObj, "object"
					objects++
				case strings.HasPrefix(p, ".git/refs/"):
					refs++
				}
				if got != want {
					t.Errorf("%s (%s): mode %v, git gives %v", p, kind, got, want)
				}
			}
			if objects == 0 || packs != 2 || refs == 0 || dirs == 0 || !created[".git/strata/gc-count"] || !created[".git/logs/refs/strata/state"] {
				t.Fatalf("strata created %d objects, %d pack files, %d refs, %d directories: %v", objects, packs, refs, dirs, created)
			}
		})
	}
}

// gitPaths lists every path under dir/.git, relative to dir.
func gitPaths(tb testing.TB, dir string) map[string]bool {
	tb.Helper()
	ps := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(dir, ".git"), func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		ps[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ps
}

func modeOf(tb testing.TB, dir, rel string) fs.FileMode {
	tb.Helper()
	fi, err := os.Lstat(filepath.Join(dir, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Mode()
}

// gitStdin runs git with stdin and returns its trimmed stdout.
func gitStdin(tb testing.TB, dir, stdin string, args ...string) string {
	tb.Helper()
	out, err := gitOut(dir, []byte(stdin), args...)
	if err != nil {
		tb.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}
