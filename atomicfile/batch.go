package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Batch replaces many files with one durability pass instead of one per
// file: Add writes each new content to a temp file beside its target (not
// yet fsynced), Commit makes the temp files durable, renames each over its
// target in the order added and then fsyncs each directory once. A crash
// leaves every target old or new, never a mix: a file's data is on disk
// before its rename. The temp files are made durable by fsyncs, several at
// a time, or, for a batch announced (Expect) as large when the machine has
// little other unwritten data, by one syncfs(2) per file system (Linux;
// local disk file systems only, see flushable): 1 000 new files on an
// ordinary disk cost ~80 ms instead of ~190. Temp files are named Prefix,
// the target's base name, "-", the writing process's id and "-" a random
// suffix, so that Leftovers can tell those of a process that died. A Batch
// is not safe for concurrent use.
type Batch struct {
	pend  []batchFile
	open  []*os.File // written, not yet fsynced
	dirs  map[string]bool
	skip  map[string]bool // targets not to replace after all
	whole bool            // durable by syncfs: Add closes each file unsynced
	fs    fsFlush
}

// flushMin is the smallest batch made durable by syncfs rather than
// per-file fsyncs.
const flushMin = 64

// CheapFlush decides whether a batch of n files is made durable by one
// flush of each file system it writes in (flushCheap). Tests replace it to
// take one way or the other whatever the machine's state.
var CheapFlush = flushCheap

// Expect announces that about n files will be added, before the first Add:
// from flushMin files on, when a flush of the whole file system is cheap
// now (see flushCheap: Linux 5.8 or later, and little unwritten data of
// other programs), the batch is made durable that way.
func (b *Batch) Expect(n int) {
	if len(b.pend) == 0 && n >= flushMin && CheapFlush(n) {
		b.whole = true
	}
}

type batchFile struct {
	tmp, name string
}

// syncGroup is how many written temp files are kept open before they are
// fsynced together (in parallel: the file system's journal commits them as
// one), bounding the open descriptors.
const syncGroup = 64

// Add writes data, with mode, to a temp file beside name (whose directory
// must exist), to be renamed over name by Commit.
func (b *Batch) Add(name string, data []byte, mode fs.FileMode) error {
	whole := false
	if b.whole {
		// its file system's error state is sampled before the write
		var err error
		if whole, err = b.fs.watch(filepath.Dir(name)); err != nil {
			return err
		}
	}
	f, err := createTemp(name, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	b.pend = append(b.pend, batchFile{tmp: f.Name(), name: name})
	if whole { // made durable by Commit's syncfs
		return f.Close()
	}
	b.open = append(b.open, f)
	if len(b.open) >= syncGroup {
		return b.syncOpen()
	}
	return nil
}

var tempSeq atomic.Uint64

// createTemp creates the temp file for name with mode. The file is created
// with mode itself; only when the umask took bits away is it changed
// afterwards (a chmod per file is a second metadata write).
func createTemp(name string, mode fs.FileMode) (*os.File, error) {
	dir, base := filepath.Dir(name), Prefix+filepath.Base(name)+"-"+strconv.Itoa(os.Getpid())+"-"
	for try := 0; ; try++ {
		tmp := filepath.Join(dir, base+strconv.FormatUint(tempSeq.Add(1), 10))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue // left by an earlier process of the same id
		}
		if err != nil {
			return nil, err
		}
		if st, err := f.Stat(); err != nil || st.Mode().Perm() != mode.Perm() {
			if err := f.Chmod(mode); err != nil {
				f.Close()
				os.Remove(tmp)
				return nil, err
			}
		}
		return f, nil
	}
}

// Len is the number of files added.
func (b *Batch) Len() int { return len(b.pend) }

// syncOpen fsyncs and closes the open temp files, several at a time.
func (b *Batch) syncOpen() error {
	errs := make([]error, len(b.open))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 16 && w < len(b.open); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				errs[i] = b.open[i].Sync()
				if cerr := b.open[i].Close(); errs[i] == nil {
					errs[i] = cerr
				}
			}
		}()
	}
	for i := range b.open {
		work <- i
	}
	close(work)
	wg.Wait()
	b.open = b.open[:0]
	return errors.Join(errs...)
}

// Skip drops the file added for name: Commit removes its temp file and
// leaves name as it is.
func (b *Batch) Skip(name string) {
	if b.skip == nil {
		b.skip = map[string]bool{}
	}
	b.skip[name] = true
}

// Commit makes every added file durable and renames it over its target, in
// the order added; between the renames of the first and second half it
// calls mid, when not nil (crash tests stop there). It then fsyncs each
// directory once. On error the temp files not renamed are removed.
func (b *Batch) Commit(mid func()) error {
	if err := b.syncOpen(); err != nil {
		b.Abort()
		return err
	}
	if b.whole {
		if err := b.fs.flush(); err != nil {
			b.Abort()
			return err
		}
	}
	if b.dirs == nil {
		b.dirs = map[string]bool{}
	}
	for i, p := range b.pend {
		if i == len(b.pend)/2 && i > 0 && mid != nil {
			mid()
		}
		if b.skip[p.name] {
			os.Remove(p.tmp)
			continue
		}
		if err := os.Rename(p.tmp, p.name); err != nil {
			b.pend = b.pend[i:]
			b.Abort()
			return err
		}
		b.dirs[filepath.Dir(p.name)] = true
	}
	b.pend = nil
	for d := range b.dirs {
		SyncDir(d)
	}
	return nil
}

// Abort removes the temp files not yet renamed. It is safe to call after
// Commit (it then does nothing).
func (b *Batch) Abort() {
	b.fs.close()
	for _, f := range b.open {
		f.Close()
	}
	b.open = nil
	for _, p := range b.pend {
		os.Remove(p.tmp)
	}
	b.pend = nil
}

// Leftovers removes the temp files that Batches of processes no longer
// running left in dir (killed between Add and Commit) and returns how many
// it removed. Temp files of running processes, and those not named by a
// Batch, are left alone.
func Leftovers(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		// Prefix BASE-PID-RANDOM: the pid is the second field from the end.
		f := strings.Split(e.Name(), "-")
		if len(f) < 3 {
			continue
		}
		pid, err := strconv.Atoi(f[len(f)-2])
		if err != nil || pid <= 0 || running(pid) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

// running reports whether process pid exists (signal 0 delivers nothing;
// EPERM means it exists under another user).
func running(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		return true // FindProcess found it; Signal(0) is not supported there
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
