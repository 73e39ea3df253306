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
// yet made durable), Commit makes the temp files durable, renames each over
// its target in the order added and then makes the renames durable.
// A crash leaves every target old or new, never a mix: a file's data is on
// disk before its rename.
//
// How the files are made durable depends on the batch's size. A small
// batch (fewer than WholeFrom files), or one on a system without syncfs(2)
// (anything but Linux 5.8 or later), fsyncs its temp files several at a
// time, then fsyncs each directory once after the renames. A larger batch
// on Linux instead calls syncfs(2) once on each file system it wrote to
// before the renames (the data reaches the disk before any name points at
// it) and once after them (the renames reach it): two flushes whatever the
// number of files, instead of one fsync per file and directory. The cost:
// syncfs writes out every dirty page of that file system, not only the
// batch's, so it also waits for other programs' unwritten data on the same
// disk. A batch therefore uses it only while the system holds less
// unwritten data than FewDirty (read from /proc/meminfo when the batch
// reaches WholeFrom files), which is 0 by default: syncfs is off unless
// FewDirty is set, since it did not pay on the machine it was measured on
// (see FewDirty). Write errors are still reported (syncfs returns those of
// the file system since the batch's first file was opened).
//
// Temp files are named Prefix, the target's base name, "-", the writing
// process's id and "-" a random suffix, so that Leftovers can tell those of
// a process that died. A Batch is not safe for concurrent use.
type Batch struct {
	pend []batchFile
	open []*os.File // written, not yet fsynced
	dirs map[string]bool
	skip map[string]bool // targets not to replace after all

	whole   bool                // made durable by syncfs of each file system
	noWhole bool                // a file system that syncfs cannot serve was written
	fss     map[uint64]*os.File // per file system written: a descriptor for syncfs
}

// WholeFrom is the number of files from which a Batch makes its files
// durable by syncing whole file systems rather than file by file (where
// the system allows it). Below it, a few fsyncs run in parallel cost less
// than flushing the file system twice.
var WholeFrom = 64

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
	f, st, err := createTemp(name, mode)
	if err != nil {
		return err
	}
	b.watch(f, st)
	_, err = f.Write(data)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	b.pend = append(b.pend, batchFile{tmp: f.Name(), name: name})
	if !b.whole && !b.noWhole && len(b.pend) >= WholeFrom && syncFSOK() {
		b.noWhole = !fewDirty()
	}
	if !b.whole && !b.noWhole && len(b.pend) >= WholeFrom {
		// From now on syncfs makes the files durable: the ones kept open
		// for their fsync no longer need it.
		b.whole = true
		var errs []error
		for _, o := range b.open {
			errs = append(errs, o.Close())
		}
		b.open = b.open[:0]
		if err := errors.Join(errs...); err != nil {
			return errors.Join(err, f.Close())
		}
	}
	if b.whole {
		if b.noWhole { // cannot happen on Linux, where every file has a device
			err = f.Sync()
		}
		return errors.Join(err, f.Close())
	}
	b.open = append(b.open, f)
	if len(b.open) >= syncGroup {
		return b.syncOpen()
	}
	return nil
}

// watch notes the file system f (with status st) is on, keeping a
// descriptor for syncfs the first time, opened before any of the batch's
// data went there.
func (b *Batch) watch(f *os.File, st fs.FileInfo) {
	if b.noWhole || !syncFSOK() {
		return
	}
	dev, ok := device(st)
	if !ok {
		b.noWhole = true
		return
	}
	if _, seen := b.fss[dev]; seen {
		return
	}
	h, err := handle(f)
	if err != nil {
		b.noWhole = true
		return
	}
	if b.fss == nil {
		b.fss = map[uint64]*os.File{}
	}
	b.fss[dev] = h
}

// syncAll calls syncfs on each file system the batch wrote to.
func (b *Batch) syncAll() error {
	var errs []error
	for _, h := range b.fss {
		errs = append(errs, syncFS(h))
	}
	return errors.Join(errs...)
}

func (b *Batch) closeHandles() {
	for _, h := range b.fss {
		h.Close()
	}
	b.fss = nil
}

var tempSeq atomic.Uint64

// createTemp creates the temp file for name with mode. The file is created
// with mode itself; only when the umask took bits away is it changed
// afterwards (a chmod per file is a second metadata write). It returns the
// file's status as created.
func createTemp(name string, mode fs.FileMode) (*os.File, fs.FileInfo, error) {
	dir, base := filepath.Dir(name), Prefix+filepath.Base(name)+"-"+strconv.Itoa(os.Getpid())+"-"
	for try := 0; ; try++ {
		tmp := filepath.Join(dir, base+strconv.FormatUint(tempSeq.Add(1), 10))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue // left by an earlier process of the same id
		}
		if err != nil {
			return nil, nil, err
		}
		st, err := f.Stat()
		if err != nil || st.Mode().Perm() != mode.Perm() {
			if err := f.Chmod(mode); err != nil {
				f.Close()
				os.Remove(tmp)
				return nil, nil, err
			}
		}
		return f, st, nil
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
// calls mid, when not nil (crash tests stop there). It then makes the
// renames durable (see Batch). On error the temp files not renamed are
// removed.
func (b *Batch) Commit(mid func()) error {
	durable := b.syncOpen
	if b.whole {
		durable = b.syncAll
	}
	if err := durable(); err != nil {
		b.Abort()
		return err
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
	defer b.closeHandles()
	if b.whole {
		return b.syncAll()
	}
	for d := range b.dirs {
		SyncDir(d)
	}
	return nil
}

// Abort removes the temp files not yet renamed. It is safe to call after
// Commit (it then does nothing).
func (b *Batch) Abort() {
	for _, f := range b.open {
		f.Close()
	}
	b.open = nil
	for _, p := range b.pend {
		os.Remove(p.tmp)
	}
	b.pend = nil
	b.closeHandles()
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
