package gitstore

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/state"
)

// boundaryRepo makes a repository r whose folder m is on another device
// than the rest (the device lookup is replaced, so that no mount is
// needed: m and below are on device 2, the rest on device 1); start is a
// folder below m.
func boundaryRepo(t *testing.T) (r, m, start string) {
	t.Helper()
	r = filepath.Join(realPath(t, t.TempDir()), "r")
	m = filepath.Join(r, "m")
	if err := os.MkdirAll(filepath.Join(m, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, r, true)
	old := deviceOf
	t.Cleanup(func() { deviceOf = old })
	deviceOf = func(p string) (uint64, error) {
		if p == m || strings.HasPrefix(p, m+string(filepath.Separator)) {
			return 2, nil
		}
		return 1, nil
	}
	return r, m, filepath.Join(m, "sub")
}

// TestDiscoveryStopsAtFileSystemBoundary: discovery does not walk onto
// another device than the one it starts on, as git's does not, unless
// $GIT_DISCOVERY_ACROSS_FILESYSTEM is true (attack31 F3: in a tmpfs mounted
// inside a work tree, strata init wrote the outer repository's
// .strata.yaml). The device lookup is replaced, so that the test needs no
// mount: r/m and below are on device 2, the rest on device 1.
func TestDiscoveryStopsAtFileSystemBoundary(t *testing.T) {
	r, m, start := boundaryRepo(t)
	for _, v := range []string{"", "false", "0", "no"} {
		t.Setenv("GIT_DISCOVERY_ACROSS_FILESYSTEM", v)
		if v == "" {
			os.Unsetenv("GIT_DISCOVERY_ACROSS_FILESYSTEM")
		}
		_, err := Open(start)
		if !errors.Is(err, state.ErrNotRepo) || !strings.Contains(err.Error(), "mount point "+m+":") {
			t.Errorf("GIT_DISCOVERY_ACROSS_FILESYSTEM=%q: Open(%s) = %v, want not a git repository naming mount point %s", v, start, err, m)
		}
	}
	// on the start's own file system the walk goes on: from r/m/sub up to m
	if s, err := Open(filepath.Join(r)); err != nil || s.Root() != r {
		t.Fatalf("Open(%s) = %v, want the repository", r, err)
	}
	for _, v := range []string{"true", "1", "yes"} {
		t.Setenv("GIT_DISCOVERY_ACROSS_FILESYSTEM", v)
		s, err := Open(start)
		if err != nil || s.Root() != r {
			t.Errorf("GIT_DISCOVERY_ACROSS_FILESYSTEM=%s: Open(%s) = %v, want the repository at %s", v, start, err, r)
		}
	}
}

// TestDiscoveryStopsAtMountPoint is the same check with a real mount, where
// one can be made (root, Linux): a tmpfs inside a work tree.
func TestDiscoveryStopsAtMountPoint(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root; TestDiscoveryStopsAtFileSystemBoundary covers the check")
	}
	r := filepath.Join(realPath(t, t.TempDir()), "r")
	m := filepath.Join(r, "m")
	if err := os.MkdirAll(m, 0o755); err != nil {
		t.Fatal(err)
	}
	initRepo(t, r, true)
	if out, err := exec.Command("mount", "-t", "tmpfs", "none", m).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs: %v: %s; TestDiscoveryStopsAtFileSystemBoundary covers the check", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", m).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", m, err, out)
		}
	})
	t.Setenv("GIT_DISCOVERY_ACROSS_FILESYSTEM", "")
	os.Unsetenv("GIT_DISCOVERY_ACROSS_FILESYSTEM")
	if _, err := gitOut(m, nil, "rev-parse", "--show-toplevel"); err == nil || !strings.Contains(err.Error(), "filesystem boundary") {
		t.Fatalf("git in the mount: %v, want it to stop at the boundary", err)
	}
	_, err := Open(m)
	if !errors.Is(err, state.ErrNotRepo) || !strings.Contains(err.Error(), "mount point "+m+":") {
		t.Fatalf("Open(%s) = %v, want not a git repository naming the mount point", m, err)
	}
	t.Setenv("GIT_DISCOVERY_ACROSS_FILESYSTEM", "true")
	if s, err := Open(m); err != nil || s.Root() != r {
		t.Fatalf("GIT_DISCOVERY_ACROSS_FILESYSTEM=true: Open(%s) = %v, want the repository at %s", m, err, r)
	}
}

// TestDiscoveryAcrossFileSystemValue: $GIT_DISCOVERY_ACROSS_FILESYSTEM is
// read as git reads it (git_env_bool): a value git dies on (" true",
// "maybe", "1 ") is refused before discovery, in any folder, with a
// *FormatError naming it, where strata read " true" as true and "maybe" as
// false and ran; any value git reads has git's meaning ("0x1", "1k" and " 1"
// are true, "0k" false). Under $GIT_DIR git reads no such variable, nor
// does strata. The device lookup is replaced as in
// TestDiscoveryStopsAtFileSystemBoundary.
func TestDiscoveryAcrossFileSystemValue(t *testing.T) {
	r, m, start := boundaryRepo(t)
	for _, v := range []string{" true", "true ", "maybe", "1 ", "k", "08", "2147483648"} {
		t.Setenv("GIT_DISCOVERY_ACROSS_FILESYSTEM", v)
		for _, dir := range []string{start, r} {
			_, err := Open(dir)
			var fe *FormatError
			if !errors.As(err, &fe) || errors.Is(err, state.ErrNotRepo) ||
				!strings.HasPrefix(err.Error(), fmt.Sprintf("$GIT_DISCOVERY_ACROSS_FILESYSTEM = %q is not a boolean git reads", v)) ||
				!strings.Contains(fe.Fix, "unset it") {
				t.Errorf("GIT_DISCOVERY_ACROSS_FILESYSTEM=%q: Open(%s) = %v, want the value refused", v, dir, err)
			}
		}
		t.Setenv("GIT_DIR", filepath.Join(r, ".git"))
		if _, err := Open(start); err != nil {
			t.Errorf("GIT_DISCOVERY_ACROSS_FILESYSTEM=%q under $GIT_DIR: Open(%s) = %v, want the repository", v, start, err)
		}
		os.Unsetenv("GIT_DIR")
		os.Unsetenv("GIT_WORK_TREE") // Open sets both under $GIT_DIR
	}
	for _, v := range []string{"0x1", "1k", " 1", "\t1", "TRUE", "+1", "010"} {
		t.Setenv("GIT_DISCOVERY_ACROSS_FILESYSTEM", v)
		if s, err := Open(start); err != nil || s.Root() != r {
			t.Errorf("GIT_DISCOVERY_ACROSS_FILESYSTEM=%q: Open(%s) = %v, want the repository at %s", v, start, err, r)
		}
	}
	for _, v := range []string{"0k", "0x0", "OFF", "00"} {
		t.Setenv("GIT_DISCOVERY_ACROSS_FILESYSTEM", v)
		if _, err := Open(start); !errors.Is(err, state.ErrNotRepo) || !strings.Contains(err.Error(), "mount point "+m+":") {
			t.Errorf("GIT_DISCOVERY_ACROSS_FILESYSTEM=%q: Open(%s) = %v, want not a git repository naming mount point %s", v, start, err, m)
		}
	}
}
