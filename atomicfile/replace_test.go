package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// canSwap skips the test where dir's file system cannot swap two files.
func canSwap(t *testing.T, dir string) {
	t.Helper()
	for _, n := range []string{"swap-a", "swap-b"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	err = d.exchange("swap-a", "swap-b")
	if errors.Is(err, errNoExchange) {
		t.Skip("no RENAME_EXCHANGE here")
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "swap-a"))
	os.Remove(filepath.Join(dir, "swap-b"))
}

// outsideSave saves data at name as an agent does: a temp file of its own
// renamed over name.
func outsideSave(t *testing.T, name, data string) {
	t.Helper()
	tmp := name + ".agent-tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Error(err)
		return
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Error(err)
	}
}

// replaceFixture writes "saved" at dir/f and returns a batch replacing it
// by "restored" while it is the file stat'ed now (as the engine checks).
func replaceFixture(t *testing.T, keep bool) (dir, name string, b *Batch) {
	t.Helper()
	dir = t.TempDir()
	canSwap(t, dir)
	name = filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("saved"), 0o644); err != nil {
		t.Fatal(err)
	}
	then, err := os.Lstat(name)
	if err != nil {
		t.Fatal(err)
	}
	b = &Batch{Unchanged: func(_ string, now fs.FileInfo) bool {
		return now != nil && SameFile(then, now) && then.Size() == now.Size() && then.ModTime().Equal(now.ModTime())
	}}
	if keep {
		b.Keep = filepath.Join(t.TempDir(), "keep")
		if err := os.Mkdir(b.Keep, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add(name, []byte("restored"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, name, b
}

// onStep sets ReplaceStep, for the test, to run the action given for each
// step in turn ("checked", then "swapped" each time), and counts them.
func onStep(t *testing.T, acts map[string][]func()) map[string]int {
	t.Helper()
	n := map[string]int{}
	ReplaceStep = func(step, _ string) {
		if i := n[step]; i < len(acts[step]) {
			acts[step][i]()
		}
		n[step]++
	}
	t.Cleanup(func() { ReplaceStep = nil })
	return n
}

// temps is the base names of strata's temp files in dir, with their
// contents.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if IsTemp(e.Name()) {
			data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			out = append(out, string(data))
		}
	}
	slices.Sort(out)
	return out
}

func wantAt(t *testing.T, name, want string) {
	t.Helper()
	if data, err := os.ReadFile(name); err != nil || string(data) != want {
		t.Fatalf("%s = %q, %v; want %q", filepath.Base(name), data, err, want)
	}
}

// No one writes meanwhile: the file is replaced, the one swapped out is
// gone (linked in Keep when set), no temp file is left.
func TestReplaceUnedited(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run("keep="+strconv.FormatBool(keep), func(t *testing.T) {
			dir, name, b := replaceFixture(t, keep)
			n := onStep(t, nil)
			notWritten, err := b.Commit(nil)
			if err != nil || len(notWritten) > 0 {
				t.Fatal(notWritten, err)
			}
			wantAt(t, name, "restored")
			if got := temps(t, dir); len(got) > 0 {
				t.Fatalf("temp files left: %q", got)
			}
			if n["checked"] != 1 || n["swapped"] != 0 {
				t.Fatalf("steps %v", n)
			}
			if keep && !slices.Equal(contents(t, b.Keep), []string{"saved"}) {
				t.Fatalf("keep holds %q", contents(t, b.Keep))
			}
		})
	}
}

// An agent's save landing between the check and the replacement (its
// rename over the name) is swapped back: its bytes at the name, the file
// reported not written, strata's temp file removed. Without the swap its
// save was replaced and stored nowhere.
func TestReplaceSwapsBackAnOutsideSave(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run("keep="+strconv.FormatBool(keep), func(t *testing.T) {
			dir, name, b := replaceFixture(t, keep)
			n := onStep(t, map[string][]func(){"checked": {func() { outsideSave(t, name, "agent 1") }}})
			notWritten, err := b.Commit(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(notWritten, []string{name}) {
				t.Fatalf("not written %q, want %q", notWritten, name)
			}
			wantAt(t, name, "agent 1")
			if got := temps(t, dir); len(got) > 0 {
				t.Fatalf("temp files left: %q", got)
			}
			if n["checked"] != 1 || n["swapped"] != 1 {
				t.Fatalf("steps %v", n)
			}
		})
	}
}

// Saves landing between the swap and the swap back too: each time the
// newest save ends at the name, and no outside file is removed — the one
// its own writer's later save superseded stays under the temp name, only
// strata's own file is gone.
func TestReplaceSwapsBackTheNewestSave(t *testing.T) {
	for _, k := range []int{1, 2, 5} {
		t.Run(strconv.Itoa(k)+" between swaps", func(t *testing.T) {
			dir, name, b := replaceFixture(t, false)
			acts := map[string][]func(){"checked": {func() { outsideSave(t, name, "agent 0") }}}
			for i := 1; i <= k; i++ {
				acts["swapped"] = append(acts["swapped"], func() { outsideSave(t, name, "agent "+strconv.Itoa(i)) })
			}
			n := onStep(t, acts)
			notWritten, err := b.Commit(nil)
			if err != nil || !slices.Equal(notWritten, []string{name}) {
				t.Fatal(notWritten, err)
			}
			wantAt(t, name, "agent "+strconv.Itoa(k))
			if got := temps(t, dir); !slices.Equal(got, []string{"agent " + strconv.Itoa(k-1)}) {
				t.Fatalf("temp files %q, want the one superseded, agent %d", got, k-1)
			}
			if n["swapped"] != k+1 {
				t.Fatalf("steps %v, want %d swaps back", n, k+1)
			}
		})
	}
}

// The file removed between the check and the swap: nothing is created in
// its place, the file reported not written.
func TestReplaceAfterARemoval(t *testing.T) {
	dir, name, b := replaceFixture(t, false)
	onStep(t, map[string][]func(){"checked": {func() { os.Remove(name) }}})
	notWritten, err := b.Commit(nil)
	if err != nil || !slices.Equal(notWritten, []string{name}) {
		t.Fatal(notWritten, err)
	}
	if _, err := os.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s: %v, want removed", name, err)
	}
	if got := temps(t, dir); len(got) > 0 {
		t.Fatalf("temp files left: %q", got)
	}
}
