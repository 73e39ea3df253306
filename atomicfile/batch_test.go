package atomicfile

import (
	"errors"
	"github.com/strata-dev/strata/internal/proc"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBatchCommitsInOrderAndSkips(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	for i := 0; i < 150; i++ { // more than one sync group
		name := filepath.Join(dir, "f"+strconv.Itoa(i))
		if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(name, []byte("new"+strconv.Itoa(i)), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "f0")); string(data) != "old" {
		t.Fatalf("replaced before Commit: %q", data)
	}
	b.Skip(filepath.Join(dir, "f7"))
	mids := 0
	if _, err := b.Commit(func() {
		mids++
		// halfway: the first half is in place, the second not yet
		if data, _ := os.ReadFile(filepath.Join(dir, "f0")); string(data) != "new0" {
			t.Errorf("f0 at mid = %q", data)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "f149")); string(data) != "old" {
			t.Errorf("f149 at mid = %q", data)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if mids != 1 {
		t.Fatalf("mid called %d times", mids)
	}
	for i := 0; i < 150; i++ {
		want := "new" + strconv.Itoa(i)
		if i == 7 {
			want = "old"
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "f"+strconv.Itoa(i))); string(data) != want {
			t.Fatalf("f%d = %q, want %q", i, data, want)
		}
	}
	if st, _ := os.Stat(filepath.Join(dir, "f1")); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 150 {
		t.Fatalf("%d entries, want 150 (no temp left)", len(ents))
	}
}

func TestBatchAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	var b Batch
	if err := b.Add(filepath.Join(dir, "a"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v", ents)
	}
}

// Leftovers lists the temp files of a process that is gone, with the file
// each was for, and removes none of them (one may be an outside save that a
// replace swapped out); not those of a running one, nor other files.
func TestLeftovers(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1)")
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	long := strings.Repeat("n", 150) + ".json"
	files := map[string]string{ // name -> the file it is listed for ("" not listed)
		Prefix + "a.json-" + dead + "-123":                    "a.json",
		Prefix + "x-y.json-" + dead + "-9":                    "x-y.json",
		Prefix + tempBase(long) + "-" + dead + "-1":           long,
		Prefix + "a.json-" + strconv.Itoa(os.Getpid()) + "-1": "",
		Prefix + "a.json-456789":                              "", // WriteTemp's, no pid
		Prefix + "5-3":                                        "",
		"a.json":                                              "",
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, l := range Leftovers(dir) {
		for _, base := range []string{"a.json", "x-y.json", long, "b.json"} {
			if l.For(base) {
				got[filepath.Base(l.Path)] = base
			}
		}
		if want := files[filepath.Base(l.Path)]; l.Target() != want && !(want == long && l.Target() == "") {
			t.Errorf("%s: Target %q", l.Path, l.Target())
		}
	}
	for name, want := range files {
		if got[name] != want {
			t.Errorf("%s: listed for %q, want %q", name, got[name], want)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A temp file names the pid namespace its pid is of: one of this
// namespace is judged by its pid, one of another namespace (a devcontainer
// and its host sharing the folder) by its age alone, never by whatever runs
// under that number here (attack38c 2: each side swept the other's live
// temp files, and kept a dead one's for good where its number ran).
func TestLeftoversOfAnotherPidNamespace(t *testing.T) {
	me := proc.PidNS()
	if me == "" {
		t.Skip("no pid namespace to read here")
	}
	if name := tempName("a.json"); !strings.HasSuffix(name, "~"+me) {
		t.Fatalf("temp name %q does not name this pid namespace", name)
	}
	age := ForeignLeftoverAge
	t.Cleanup(func() { ForeignLeftoverAge = age })
	ForeignLeftoverAge = 400 * time.Millisecond
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1)")
	}
	dead, live := strconv.Itoa(cmd.Process.Pid), strconv.Itoa(os.Getpid())
	other := me + "0"
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// written ForeignLeftoverAge ago: another namespace's is gone,
	// whatever runs under its number here
	oldForeign := Prefix + "d.json-" + live + "-4~" + other
	write(oldForeign)
	time.Sleep(ForeignLeftoverAge + 200*time.Millisecond)
	listed := map[string]bool{
		Prefix + "a.json-" + dead + "-1~" + me:    true,  // this namespace, gone
		Prefix + "b.json-" + live + "-2~" + me:    false, // this namespace, running
		Prefix + "c.json-" + dead + "-3~" + other: false, // another's, young: its writer may live
		oldForeign: true,
		Prefix + "e.json-" + live + "-5~" + other: false, // another's, young
	}
	for name := range listed {
		if name != oldForeign {
			write(name)
		}
	}
	// a user's file a swap just moved to another namespace's temp name:
	// its mtime is old, its rename new (attack38e M2)
	user := filepath.Join(dir, "f.json")
	write("f.json")
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(user, long, long); err != nil {
		t.Fatal(err)
	}
	swapped := Prefix + "f.json-" + live + "-6~" + other
	if err := os.Rename(user, filepath.Join(dir, swapped)); err != nil {
		t.Fatal(err)
	}
	listed[swapped] = false
	got := map[string]bool{}
	for _, l := range Leftovers(dir) {
		got[filepath.Base(l.Path)] = true
	}
	for name, want := range listed {
		if got[name] != want {
			t.Errorf("%s: listed %v, want %v", name, got[name], want)
		}
	}
	// the young ones of another namespace, which status and doctor name
	// while no record takes them (attack38c M2c)
	young := map[string]bool{}
	for _, l := range YoungForeign(dir) {
		young[filepath.Base(l.Path)] = true
	}
	for name := range listed {
		want := strings.HasSuffix(name, "~"+other) && name != oldForeign
		if young[name] != want {
			t.Errorf("%s: listed young %v, want %v", name, young[name], want)
		}
	}
}

// WriteTemp's temp file carries this process's id, as a Batch's do, so
// that one a killed process left (the L3 graph's, attack19-crash 5) is
// listed by Leftovers once the process is gone, not kept forever.
func TestWriteTempNamesItsProcess(t *testing.T) {
	dir := t.TempDir()
	tmp, err := WriteTemp(filepath.Join(dir, "memory.jsonl"), []byte("{}\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(tmp), Prefix+"memory.jsonl-"+strconv.Itoa(os.Getpid())+"-") {
		t.Fatalf("temp name %s carries no process id", tmp)
	}
	if len(Leftovers(dir)) != 0 {
		t.Fatal("a running process's temp file listed")
	}
}

// A file a batch replaces keeps the mode it has at Commit, not the one its
// caller read before Add: a chmod made in between (chmod changes neither
// size nor mtime, so Unchanged accepts the file) is not undone (attack36d
// M1: a `chmod 600` made while restore --all wrote came out 0644).
func TestBatchFollowsChmodSinceAdd(t *testing.T) {
	for _, whole := range []bool{false, true} {
		dir := t.TempDir()
		name := filepath.Join(dir, "f.json")
		if err := os.WriteFile(name, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, 0o644); err != nil {
			t.Fatal(err)
		}
		var b Batch
		b.Unchanged = func(string, fs.FileInfo) bool { return true }
		if whole {
			was := CheapFlush
			CheapFlush = func(int) bool { return true }
			b.Expect(flushMin)
			CheapFlush = was
			if !b.whole {
				t.Fatal("the batch is not made durable by syncfs")
			}
		}
		if err := b.Add(name, []byte("new\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, 0o600); err != nil {
			t.Fatal(err)
		}
		if late, err := b.Commit(nil); err != nil || len(late) > 0 {
			t.Fatalf("whole %v: Commit = %v, %v", whole, late, err)
		}
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(name); string(data) != "new\n" || st.Mode().Perm() != 0o600 {
			t.Errorf("whole %v: %q mode %o, want the new content at the mode chmod gave (600)", whole, data, st.Mode().Perm())
		}
	}
}

// A link (or another file) put at a temp file's name between Add and Commit
// is never chmodded, put in place of the file it replaces, or reported
// written: the temp name is predictable, and a chmod by name followed a
// link to a private file outside the work tree, making it 0644 (attack36e
// H1); the swap put the link in place of the kept file, and restore said
// restored (M1).
func TestBatchTempSwappedForLink(t *testing.T) {
	for _, isNew := range []bool{false, true} {
		dir, outside := t.TempDir(), t.TempDir()
		private := filepath.Join(outside, "id_rsa")
		if err := os.WriteFile(private, []byte("secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, "f.json")
		if !isNew {
			if err := os.WriteFile(name, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var b Batch
		b.Unchanged = func(string, fs.FileInfo) bool { return true }
		tempForLink(t, namedTempAdded(t, &b, name, isNew), private)
		if !isNew {
			if err := os.Chmod(name, 0o640); err != nil { // a mode to follow
				t.Fatal(err)
			}
		}
		late, err := b.Commit(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(late) != 1 {
			t.Errorf("new %v: not written %v, want the file", isNew, late)
		}
		if st, err := os.Stat(private); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("new %v: the private file outside is %v, %v; want 600", isNew, st.Mode().Perm(), err)
		}
		st, err := os.Lstat(name)
		switch {
		case isNew && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("new: %s is there (%v), want nothing", name, err)
		case !isNew && (err != nil || !st.Mode().IsRegular()):
			t.Errorf("the kept file is %v, %v; want the old regular file", st, err)
		case !isNew:
			if data, _ := os.ReadFile(name); string(data) != "old\n" {
				t.Errorf("the kept file holds %q, want the old content", data)
			}
		}
	}
}

// A new file's named temp file swapped for a link after Commit's check:
// the file goes in place through the descriptor checked, never by the
// name another process took over, so no link lands at the target, and the
// file, gone from under its temp name, is reported not written
// (attack36f M1: restore --all put 24 such links in place, and said
// restored).
func TestBatchNewTempSwappedAfterCheck(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	private := filepath.Join(outside, "id_rsa")
	if err := os.WriteFile(private, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "f.json")
	var b Batch
	tmp := namedTempAdded(t, &b, name, true)
	placeStep = func(string) { tempForLink(t, tmp, private) }
	defer func() { placeStep = nil }()
	late, err := b.Commit(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(late) != 1 {
		t.Errorf("not written %v, want the file", late)
	}
	if st, err := os.Stat(private); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the private file is %v, %v; want 600", st, err)
	}
	if st, err := os.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is there (%v, %v), want nothing", name, st, err)
	}
}

// The temp file Commit puts in place must be the file Add made as Add made
// it: another process that wrote into it (a group-writable folder under
// umask 002), or that removed it and got its inode number back for a file
// of its own (ext4 reuses them; attack36f M2: 30 of 30 kept files took
// such a file's bytes, reported restored), changed its change time, which
// no process can set back: the file is not written.
func TestBatchTempRewrittenSinceAdd(t *testing.T) {
	b, name, tmp := oldAddedThroughTemp(t)
	time.Sleep(20 * time.Millisecond) // past the file system's clock tick, so the change time moves
	if err := os.WriteFile(tmp, []byte("bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	late, err := b.Commit(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(late) != 1 {
		t.Errorf("not written %v, want the file", late)
	}
	if data, _ := os.ReadFile(name); string(data) != "old\n" {
		t.Errorf("the file holds %q, want the old content", data)
	}
}

// What is put at a temp name is looked at before it is opened: a device
// node or pipe there is never opened, so no driver's open (or a pipe's
// waiting writer) runs on strata's behalf (attack36f L). The pipe stands
// for a device here: a writer blocked opening it goes on only if someone
// opens it for reading.
func TestBatchTempSwappedForPipeNotOpened(t *testing.T) {
	b, _, pipe := oldAddedThroughTemp(t)
	if err := os.Remove(pipe); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	keep := filepath.Join(t.TempDir(), "pipe") // to let the writer go at the end
	if err := os.Link(pipe, keep); err != nil {
		t.Skipf("link: %v", err)
	}
	opened := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(pipe, os.O_WRONLY, 0) // blocks until a reader opens it
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	late, err := b.Commit(nil)
	if err != nil || len(late) != 1 {
		t.Errorf("Commit = %v, %v; want the file not written", late, err)
	}
	select {
	case <-opened:
		t.Error("the pipe at the temp name was opened")
	case <-time.After(200 * time.Millisecond):
		// never opened: let the writer go
		if f, err := os.OpenFile(keep, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-opened
			f.Close()
		}
	}
}

// namedTempAdded adds "new\n" for name to b (AddNew when isNew) with a
// named temp file, the kind whose name another process can guess, and
// oldAddedThroughTemp makes a file f.json holding "old" and a Batch that
// replaces it whatever it finds (Unchanged always true), its new version
// Added through a named temp file, whose name it returns.
func oldAddedThroughTemp(t *testing.T) (b *Batch, name, tmp string) {
	t.Helper()
	name = filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(name, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b = &Batch{Unchanged: func(string, fs.FileInfo) bool { return true }}
	return b, name, namedTempAdded(t, b, name, false)
}

// returns that temp file's path, the one temp file in name's folder.
func namedTempAdded(t *testing.T, b *Batch, name string, isNew bool) string {
	t.Helper()
	was := noLinks.Load()
	noLinks.Store(true) // no unnamed temp files
	add := b.Add
	if isNew {
		add = b.AddNew
	}
	err := add(name, []byte("new\n"), 0o644)
	noLinks.Store(was)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Dir(name))
	if err != nil {
		t.Fatal(err)
	}
	var tmps []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), Prefix) {
			tmps = append(tmps, filepath.Join(filepath.Dir(name), e.Name()))
		}
	}
	if len(tmps) != 1 {
		t.Fatalf("temp files %v, want one", tmps)
	}
	return tmps[0]
}

// tempForLink puts a symbolic link to target in the place of the temp
// file tmp, as another process that can write in its folder may
// (swapForLink does so with a folder).
func tempForLink(t *testing.T, tmp, target string) {
	t.Helper()
	if err := os.Remove(tmp); err != nil {
		t.Error(err)
	}
	if err := os.Symlink(target, tmp); err != nil {
		t.Error(err)
	}
}
