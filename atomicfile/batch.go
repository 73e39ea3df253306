package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-dev/strata/internal/proc"
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
// ordinary disk cost ~80 ms instead of ~190; in such a batch two writer
// goroutines make and fill the temp files while the caller goes on adding
// (see pendingWrite), and Commit waits for them. Temp files are named Prefix,
// the target's base name (cut when long, see tempBase), "-", the writing
// process's id and "-" a number, so that Leftovers can tell those of a
// process that died.
//
// A file that does not exist yet is added with AddNew: Commit creates it
// only if nothing has appeared at its name meanwhile, and never replaces
// what has. On Linux its temp file has no name at all (O_TMPFILE, linked
// into place by Commit): one directory entry written instead of two, and
// nothing to leave behind in a crash. A Batch is not safe for concurrent
// use.
//
// On Linux each directory a batch writes in is opened once, at the first
// Add there, and every step on its files (making the temp file, the check
// of what is at the target, linking or renaming into place, the fsync) is
// taken relative to that open directory: the directory written in is the
// one DirOK approved, whatever its path names by then. Commit checks each
// directory again before it puts the first file there, and leaves the
// directory's files unwritten, among the names it returns, when DirOK
// refuses it now or its path no longer names it (a folder swapped for a
// symbolic link since Add). Elsewhere the steps go by path, as the checks
// do.
//
// A batch holds at most dirMax directories open (an eighth of the
// process's open-file limit; see openMax): past it, the one opened longest
// ago is closed (once a file put there since its last fsync has been
// fsynced with it), and opened again by path when a file there needs it,
// at Add, at Commit or to remove a temp file. It is taken again only when
// its path still names the very directory closed (same device and inode)
// and DirOK, asked again, accepts where it is; otherwise Add fails, and
// Commit leaves the directory's files not yet in place unwritten, as for a
// folder swapped since Add; one that cannot be opened for another reason
// (out of descriptors) fails Add or Commit. A named temp file in a
// directory moved away meanwhile is then left there (a Leftover once the
// process has ended); an unnamed one goes with its descriptor.
type Batch struct {
	pend    []batchFile
	open    []batchFile // written, not yet fsynced
	unnamed int         // unnamed temp files held open
	dirs    map[string]*dir
	opened  []*dir          // the directories open, in the order opened (see dirMax)
	skip    map[string]bool // targets not to replace after all
	whole   bool            // durable by syncfs: Add closes each file unsynced
	fs      fsFlush
	work    chan *pendingWrite // to the writers, in a batch made durable by syncfs
	writing sync.WaitGroup     // the writers

	// DirOK, when set, judges each directory the batch writes in by where
	// it really is (real, all symbolic links resolved; dir is the name's
	// directory as added): at the first Add there, whose error it then
	// is, and again at Commit (see above).
	DirOK func(dir, real string) error

	// Unchanged, when set, is asked by Commit right before a file added by
	// Add replaces name: false leaves name as it is (edited meanwhile). now
	// is what is at name then (os.Lstat's answer, taken in the directory
	// checked; nil when nothing is; compare with SameFile). With Keep set,
	// name's file has been linked into Keep by then: its link count and
	// change time (ctime) have moved, nothing else. Where the file system
	// can swap two files (Linux, see replace.go), it is asked a second
	// time, about the file the new one has just been swapped with (now
	// under the temp file's name), and false then swaps it back: an outside
	// rename landing between the first check and the swap is never
	// replaced. Its last answer is the one that counts.
	Unchanged func(name string, now fs.FileInfo) bool

	// Settle, when set, is how long the file a swap replaced stays at the
	// temp name, still reachable, before Unchanged is asked about it once
	// more (replace.go): a write into it by a writer that opened it before
	// the swap, landing within Settle, makes the swap undone (Unchanged's
	// false), so that write is not lost. Each such file waits Settle.
	Settle time.Duration

	// Keep, when set, is a directory on the targets' file system where
	// Commit links each file it replaces right before the rename, so that
	// freeing the old file is left to Sweep (see keep.go).
	Keep    string
	keepDir *dir   // Keep, open
	kept    int    // files linked into Keep
	keepID  string // this batch's prefix of link names
	keepSeq int
	keepOff bool // a link failed for a reason that stays: rename as before
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
	name  string
	d     *dir          // name's directory
	base  string        // name's base name
	tmp   string        // the named temp file's base name; "" for an unnamed one
	info  fs.FileInfo   // the named temp file as made (ownTemp tells it from one put in its place)
	f     *os.File      // the unnamed temp file, open until Commit links it
	isNew bool          // added by AddNew: name is created, never replaced
	w     *pendingWrite // its temp file, while a writer makes it
}

// pendingWrite is a temp file a writer goroutine creates and fills, in a
// batch made durable by syncfs, while the caller goes on adding: the
// caller's own work for each file (checking what is on disk, finding the
// content) and the kernel's for the one before (allocating and writing an
// inode) then overlap. Commit waits for the writers before it flushes.
type pendingWrite struct {
	name    string
	d       *dir
	base    string
	data    []byte
	mode    fs.FileMode
	unnamed bool // try an unnamed temp file first

	f    *os.File    // the unnamed temp file made, open
	tmp  string      // or the named one, closed
	info fs.FileInfo // the named one as made
	err  error
}

// writers is how many goroutines write a batch's temp files.
const writers = 2

// errNoUnnamed: no unnamed temp file here (see openUnnamed).
var errNoUnnamed = errors.New("no unnamed temp files here")

// syncGroup is how many written temp files are kept open before they are
// fsynced together (in parallel: the file system's journal commits them as
// one), bounding the open descriptors; fewer under a low open-file limit
// (groupMax).
const syncGroup = 64

// Add writes data, with mode, to a temp file beside name (whose directory
// must exist), to be renamed over name by Commit. mode is the file's
// exactly, whatever the umask (a caller replacing a file passes its
// mode), or Default: 0666 less the umask, as a new file gets.
func (b *Batch) Add(name string, data []byte, mode fs.FileMode) error {
	return b.add(name, data, mode, false)
}

// AddNew is Add for a name that does not exist: Commit creates the file
// there, unless something has appeared at name meanwhile, which it leaves
// as it is and returns among the names it did not write. On Linux the
// kernel checks and creates in one step (link(2), or rename(2) with
// RENAME_NOREPLACE); elsewhere, and on a Linux file system without that
// flag, a name that appears after the caller's own check is replaced, as
// Add replaces.
func (b *Batch) AddNew(name string, data []byte, mode fs.FileMode) error {
	return b.add(name, data, mode, true)
}

func (b *Batch) add(name string, data []byte, mode fs.FileMode, isNew bool) error {
	d, err := b.dir(filepath.Dir(name))
	if err != nil {
		return err
	}
	base := filepath.Base(name)
	if b.whole {
		// its file system's error state is sampled before the write
		whole, err := b.fs.watch(filepath.Dir(name))
		if err != nil {
			return err
		}
		if whole { // made durable by Commit's syncfs: a writer writes it
			w := &pendingWrite{name: name, d: d, base: base, data: data, mode: mode, unnamed: b.unnamedAllowed(isNew)}
			if w.unnamed {
				b.unnamed++ // at most; Commit counts again what the writers made
			}
			d.writes.Add(1)
			b.pend = append(b.pend, batchFile{name: name, d: d, base: base, isNew: isNew, w: w})
			b.startWriters()
			b.work <- w
			return nil
		}
	}
	p := batchFile{name: name, d: d, base: base, isNew: isNew}
	f, tmp, info, err := createWrite(d, base, data, mode, b.unnamedAllowed(isNew), false)
	if err != nil {
		return err
	}
	p.tmp, p.info = tmp, info
	if tmp == "" {
		p.f = f // kept open until Commit links it
		b.unnamed++
	}
	b.pend = append(b.pend, p)
	p.f = f // to close once fsynced
	b.open = append(b.open, p)
	if len(b.open) >= groupMax() {
		return b.syncOpen()
	}
	return nil
}

// dir returns the directory path, opened (and judged by DirOK) at its
// first file, and opened and judged again if it has been closed since
// (see dirMax).
func (b *Batch) dir(path string) (*dir, error) {
	if d := b.dirs[path]; d != nil {
		if !d.isOpen() {
			if err := b.reach(d); err != nil {
				return nil, err
			}
			if err := d.judge(b.DirOK); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	b.makeRoom()
	d, err := openDir(path)
	if err != nil {
		return nil, err
	}
	if err := d.judge(b.DirOK); err != nil {
		d.close()
		return nil, err
	}
	if b.dirs == nil {
		b.dirs = map[string]*dir{}
	}
	b.dirs[path] = d
	b.opened = append(b.opened, d)
	return d, nil
}

// reach opens d again if makeRoom closed it, when its path still names
// the very directory closed (dir.reopen); else it returns an error and d
// stays closed. The caller judges d again.
func (b *Batch) reach(d *dir) error {
	if d.isOpen() {
		return nil
	}
	b.makeRoom()
	if err := d.reopen(); err != nil {
		return err
	}
	b.opened = append(b.opened, d)
	return nil
}

// makeRoom closes the directories opened longest ago until fewer than
// dirMax are open: each once a writer has made its temp files there, and
// fsynced first when a file was put in it.
func (b *Batch) makeRoom() {
	for len(b.opened) >= dirMax() {
		d := b.opened[0]
		b.opened = b.opened[1:]
		d.writes.Wait()
		if d.used {
			d.sync()
			d.used = false
		}
		d.spare()
	}
}

// recheck is Commit's check of d (dir.recheck), opened again first if
// makeRoom closed it: bad when d is refused, failed when it could not be
// opened again for another reason (out of descriptors, say), which fails
// the Commit rather than leaving its files unwritten as if edited.
func (b *Batch) recheck(d *dir) (bad, failed error) {
	if err := b.reach(d); errors.Is(err, errDirMoved) {
		return err, nil
	} else if err != nil {
		return nil, err
	}
	return d.recheck(b.DirOK), nil
}

// closeDirs closes the directories the batch opened.
func (b *Batch) closeDirs() {
	for _, d := range b.dirs {
		d.close()
	}
	b.dirs = nil
	b.opened = nil
	if b.keepDir != nil {
		b.keepDir.close()
		b.keepDir = nil
	}
}

// unnamedAllowed reports whether a file added now may be an unnamed temp
// file: it is new, the batch holds fewer open than unnamedMax, and no link
// was refused in this process.
func (b *Batch) unnamedAllowed(isNew bool) bool {
	return isNew && b.unnamed < unnamedMax() && !noLinks.Load()
}

// createWrite makes the temp file of base in d, with mode, and writes data
// to it: an unnamed one when unnamed is true and the file system can make
// one, else a named one (tmp, its base name). An unnamed file is returned
// open; a named one open too, unless closeNamed. On error nothing is left.
func createWrite(d *dir, base string, data []byte, mode fs.FileMode, unnamed, closeNamed bool) (f *os.File, tmp string, info fs.FileInfo, err error) {
	if unnamed {
		if f, err = d.openUnnamed(createPerm(mode)); err == nil {
			if err = setMode(f, mode); err != nil {
				f.Close()
				return nil, "", nil, err
			}
		}
	}
	if f == nil { // not new, or no unnamed file here: a named one
		if f, tmp, err = d.createTemp(base, mode); err != nil {
			return nil, "", nil, err
		}
	}
	_, err = f.Write(data)
	if err == nil && tmp != "" {
		// what it is once written, to tell it at Commit from a file or
		// link another process put at its name (ownTemp), an inode number
		// freed and taken again included: its change time and size too
		info, err = f.Stat()
	}
	if err != nil || tmp != "" && closeNamed {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		f = nil
	}
	if err != nil && tmp != "" {
		d.remove(tmp)
	}
	if err != nil {
		return nil, "", nil, err
	}
	return f, tmp, info, nil
}

// fillTemp is createWrite; tests replace it to fail.
var fillTemp = createWrite

// startWriters starts the batch's writers, once.
func (b *Batch) startWriters() {
	if b.work != nil {
		return
	}
	b.work = make(chan *pendingWrite, 2*syncGroup)
	for range writers {
		b.writing.Add(1)
		go func() {
			defer b.writing.Done()
			for w := range b.work {
				w.f, w.tmp, w.info, w.err = fillTemp(w.d, w.base, w.data, w.mode, w.unnamed, true)
				w.data = nil
				w.d.writes.Done()
			}
		}()
	}
}

// waitWriters waits for the writers to finish and takes what they made
// into the batch: each file's temp file, or the first error, naming its
// file (the others' temp files stay, for Abort to remove).
func (b *Batch) waitWriters() error {
	if b.work == nil {
		return nil
	}
	close(b.work)
	b.writing.Wait()
	b.work = nil
	var first error
	b.unnamed = 0
	for i := range b.pend {
		p := &b.pend[i]
		if w := p.w; w != nil {
			p.f, p.tmp, p.info, p.w = w.f, w.tmp, w.info, nil
			if w.err != nil && first == nil {
				first = fmt.Errorf("write %s: %w", p.name, w.err)
			}
		}
		if p.f != nil && p.tmp == "" {
			b.unnamed++
		}
	}
	return first
}

// discard closes p's temp file if it is open and removes it if it has a
// name: p is not written. A named temp file in a directory closed for
// another (see dirMax) and moved away meanwhile cannot be reached: it is
// left there, a Leftover once this process has ended.
func (b *Batch) discard(p batchFile) {
	if p.f != nil {
		p.f.Close()
		if p.tmp == "" {
			b.unnamed--
		}
	}
	if p.tmp != "" && b.reach(p.d) == nil {
		p.d.remove(p.tmp)
	}
}

var tempSeq atomic.Uint64

// tempName is a new name for a temp file of base's in its folder: Prefix,
// base (cut when long, tempBase), "-", this process's id (Leftovers tells
// those of a process that died), "-" and a number of this process's.
func tempName(base string) string {
	name := Prefix + tempBase(base) + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tempSeq.Add(1), 10)
	if ns := proc.PidNS(); ns != "" {
		name += "~" + ns // whose pid it is (Leftovers)
	}
	return name
}

// ForeignLeftoverAge is how old a temp file of another pid namespace's
// process must be before Leftovers lists it; tests shorten it.
var ForeignLeftoverAge = 10 * time.Minute

// createTemp creates the temp file for base in d with mode and returns it
// open, with its base name.
func (d *dir) createTemp(base string, mode fs.FileMode) (*os.File, string, error) {
	for try := 0; ; try++ {
		tmp := tempName(base)
		f, err := d.create(tmp, createPerm(mode))
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue // left by an earlier process of the same id
		}
		if err != nil {
			return nil, "", err
		}
		if err := setMode(f, mode); err != nil {
			f.Close()
			d.remove(tmp)
			return nil, "", err
		}
		return f, tmp, nil
	}
}

// setMode gives f, just created with mode, mode itself: only when the
// umask took bits away is it changed (a chmod per file is a second
// metadata write). A file of mode Default keeps what the kernel gave it,
// 0666 less the umask.
func setMode(f *os.File, mode fs.FileMode) error {
	if mode.Perm() == Default {
		return nil
	}
	if st, err := f.Stat(); err == nil && st.Mode().Perm() == mode.Perm() {
		return nil
	}
	return f.Chmod(mode)
}

// Len is the number of files added.
func (b *Batch) Len() int { return len(b.pend) }

// syncOpen fsyncs the open temp files, several at a time, and closes the
// named ones (an unnamed one stays open until Commit links it).
func (b *Batch) syncOpen() error {
	errs := make([]error, len(b.open))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 16 && w < len(b.open); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				p := b.open[i]
				errs[i] = p.f.Sync()
				if p.tmp == "" {
					continue
				}
				if cerr := p.f.Close(); errs[i] == nil {
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
	clear(b.open)
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

// Commit makes every added file durable and puts it in place in the order
// added: renamed over its target, or, added by AddNew, created at its name
// unless something has appeared there. Right before a file added by Add
// replaces its target, Commit asks b.Unchanged, when set, whether the
// target is still what the caller expects; if not, the target is left as
// it is (on Linux asked again of the file actually replaced, see
// replace.go). Between the first and second half it calls mid, when not nil
// (crash tests stop there). It then fsyncs each directory once (one
// closed for another meanwhile was fsynced as it was closed) and returns
// the names of the files it did not put in place for those two reasons, and
// those of a directory refused by its check at Commit (see Batch). On error
// the temp files not yet in place are removed.
func (b *Batch) Commit(mid func()) (notWritten []string, err error) {
	if err := b.waitWriters(); err != nil {
		b.Abort()
		return nil, err
	}
	if err := b.syncOpen(); err != nil {
		b.Abort()
		return nil, err
	}
	if b.whole {
		if err := b.fs.flush(); err != nil {
			b.Abort()
			return nil, err
		}
	}
	for i, p := range b.pend {
		if i == len(b.pend)/2 && i > 0 && mid != nil {
			mid()
		}
		if b.skip[p.name] {
			b.discard(p)
			continue
		}
		if p.d.bad == nil && (!p.d.checked || !p.d.isOpen()) {
			p.d.checked = true
			var err error
			if p.d.bad, err = b.recheck(p.d); err != nil {
				b.pend = b.pend[i:]
				b.Abort()
				return notWritten, err
			}
		}
		if p.d.bad != nil {
			notWritten = append(notWritten, p.name)
			b.discard(p)
			continue
		}
		if !p.isNew {
			// linked before Unchanged is asked, so that nothing comes
			// between the check and the rename
			b.keepLink(p)
		}
		var now fs.FileInfo
		if !p.isNew && b.Unchanged != nil {
			now = p.d.stat(p.base)
		}
		if !p.isNew && b.Unchanged != nil && !b.Unchanged(p.name, now) {
			notWritten = append(notWritten, p.name)
			b.discard(p)
			continue
		}
		var own *os.File // the named temp file, checked and open
		if p.tmp != "" {
			var ok bool
			if own, ok = p.d.followMode(p.tmp, p.info, now); !ok {
				// not the temp file Add made: something another process
				// put at its name (a link out of the tree, say) is never
				// chmodded, put in place or reported written (attack36e
				// H1, M1)
				notWritten = append(notWritten, p.name)
				b.discard(p)
				continue
			}
		}
		if own != nil && !p.isNew {
			own.Close() // replace holds what it swaps itself
			own = nil
		}
		if !p.isNew && b.Unchanged != nil {
			switch ok, err := b.replace(p); {
			case err != nil:
				p.d.remove(p.tmp)
				b.pend = b.pend[i+1:]
				b.Abort()
				return notWritten, err
			case !ok:
				notWritten = append(notWritten, p.name)
			}
			p.d.used = true // a swap back is made durable too
			continue
		}
		if placeStep != nil {
			placeStep(p.name)
		}
		var err error
		if own != nil {
			// a new file's named temp file goes in place as the very file
			// checked, linked through its descriptor, not renamed by a name
			// another process can swap meanwhile (attack36f M1); its temp
			// name then goes. Where that link cannot be made, by name.
			err = link(p.d, own, p.base)
			own.Close()
			switch {
			case err == nil:
				p.d.remove(p.tmp)
			case errors.Is(err, fs.ErrNotExist):
				// unlinked since the check (its name taken over by another
				// process's file or link): nothing of strata's to put in
				// place, and nothing else is put there
				notWritten = append(notWritten, p.name)
				b.discard(p)
				continue
			case !errors.Is(err, fs.ErrExist):
				err = place(p)
			}
		} else {
			err = place(p)
		}
		if p.isNew && errors.Is(err, fs.ErrExist) {
			notWritten = append(notWritten, p.name)
			b.discard(p)
			continue
		}
		if p.f != nil {
			p.f.Close()
			b.unnamed--
		}
		if err != nil {
			if p.tmp != "" {
				p.d.remove(p.tmp)
			}
			b.pend = b.pend[i+1:]
			b.Abort()
			return notWritten, err
		}
		p.d.used = true
		if p.tmp != "" && !p.d.landed(p.base, p.info) {
			// a named temp file goes in place by name: another process's
			// link or file put at the temp name between the check and the
			// rename went there instead, and is not reported written
			// (attack36f M1: restore --all said restored for links out of
			// the tree)
			notWritten = append(notWritten, p.name)
		}
	}
	b.pend = nil
	for _, d := range b.dirs {
		if d.used {
			d.sync()
		}
	}
	b.closeDirs()
	return notWritten, nil
}

// place puts p's durable temp file at p.name.
func place(p batchFile) error {
	switch {
	case p.f != nil:
		err := link(p.d, p.f, p.base)
		if err == nil || errors.Is(err, fs.ErrExist) {
			return err
		}
		// The file system made the file but will not name it (a sandbox
		// refusing links through /proc, say): its content goes the named
		// way, and later batches make named temp files from the start.
		noLinks.Store(true)
		return p.d.placeCopy(p.f, p.base)
	case p.isNew:
		return p.d.renameNew(p.tmp, p.base)
	default:
		return p.d.rename(p.tmp, p.base)
	}
}

// followMode gives the temp file tmp, about to replace the file whose
// lstat is now (one Unchanged accepted), that file's permission bits as
// they are now: a file replaced keeps its mode, a chmod made since Add
// (which read the mode it passed) included — chmod changes neither size
// nor mtime, so Unchanged accepts the file, and a `chmod 600` made while
// restore --all or sync wrote was undone (attack36d M1). Only when the
// bits differ is the temp file changed; a failure leaves it as Add made it.
//
// It first makes sure the file at tmp is the one Add made (ownTemp: opened
// without following a link, the same file): false when it is not — a
// link or another file put at the predictable temp name, which a chmod by
// name would have followed, making a private file outside the work tree
// world-readable (attack36e H1), and which the rename or swap would have
// put in place of the kept file (M1). now nil (a new file, or no Unchanged
// asked): only that check.
// On true, f is the temp file, open: the caller closes it.
func (d *dir) followMode(tmp string, made, now fs.FileInfo) (f *os.File, ok bool) {
	f, ok = d.ownTemp(tmp, made)
	if !ok {
		return nil, false
	}
	if now != nil && now.Mode().IsRegular() {
		if st, err := f.Stat(); err == nil && st.Mode().Perm() != now.Mode().Perm() {
			_ = f.Chmod(now.Mode().Perm())
		}
	}
	return f, true
}

// placeStep, set by tests only, is called with the target's name right
// before Commit puts a file in place by name (place).
var placeStep func(name string)

// landed reports whether what is at base now is the regular file made as
// made says: the temp file a rename by name put there.
func (d *dir) landed(base string, made fs.FileInfo) bool {
	st := d.stat(base)
	// the same file only: a link or rename changes its change time
	return made != nil && st != nil && st.Mode().IsRegular() && SameFile(st, made)
}

// sameMade reports whether st is the temp file made describes, as it was
// made: the same file (device and inode), its size, and its change time
// (mtime where that is not read), which no process can set: an inode
// number freed when another process removed the temp file and taken again
// by a file it made passes SameFile alone (attack36f M2: 30 of 30 kept
// files took such a file's bytes, reported restored).
func sameMade(st, made fs.FileInfo) bool {
	return SameFile(st, made) && st.Size() == made.Size() && changeTime(st) == changeTime(made)
}

// stat is lstat's answer, nil when it has none.
func (d *dir) stat(base string) fs.FileInfo {
	st, err := d.lstat(base)
	if err != nil {
		return nil
	}
	return st
}

// checkedRename renames tmp to name if nothing is at name right before: an
// error wrapping fs.ErrExist when something is. Something appearing between
// the check and the rename is replaced; renameNew avoids that where it can.
func checkedRename(tmp, name string) error {
	if _, err := os.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			err = fs.ErrExist
		}
		return &os.LinkError{Op: "rename", Old: tmp, New: name, Err: err}
	}
	return os.Rename(tmp, name)
}

// link is linkUnnamed; tests replace it to refuse.
var link = (*dir).linkUnnamed

// noLinks is set once an unnamed file could not be linked.
var noLinks atomic.Bool

// placeCopy creates base in d, unless it exists, with the content and mode
// of the unnamed file f: written to a named temp file, fsynced, renamed.
func (d *dir) placeCopy(f *os.File, base string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(io.NewSectionReader(f, 0, st.Size()))
	if err != nil {
		return err
	}
	tmp, err := d.writeTemp(base, data, st.Mode().Perm())
	if err != nil {
		return err
	}
	if err = d.renameNew(tmp, base); err != nil {
		d.remove(tmp)
	}
	return err
}

// writeTemp writes data to a new temp file of base in d (createTemp), with
// mode, fsynced and closed, and returns its name. On error nothing is left.
func (d *dir) writeTemp(base string, data []byte, mode fs.FileMode) (string, error) {
	f, tmp, err := d.createTemp(base, mode)
	if err != nil {
		return "", err
	}
	if err := fill(f, data, nil, true); err != nil { // its mode set by createTemp
		d.remove(tmp)
		return "", err
	}
	return tmp, nil
}

// Abort removes the temp files not yet in place. It is safe to call after
// Commit (it then does nothing).
func (b *Batch) Abort() {
	b.waitWriters()
	b.fs.close()
	for _, p := range b.open {
		if p.tmp != "" {
			p.f.Close() // named and open: not in pend with its file
		}
	}
	b.open = nil
	for _, p := range b.pend {
		b.discard(p)
	}
	b.pend = nil
	b.closeDirs()
}

// A Leftover is a temp file that a process no longer running left beside
// the file it was for: a Batch's new version never renamed into place
// (killed between Add and Commit), or the file a replace swapped out
// (replace.go) or RemoveUnchanged moved aside (killed before it looked at
// it, or an outside version its writer superseded). The last two may be an
// agent's save found nowhere else, so a leftover is never removed here:
// its caller removes it once its content is safe.
type Leftover struct {
	Path string // the temp file
	of   string // the base name of the file it was for, as the temp name carries it (tempBase)
}

// For reports whether l was for the file named base in its folder.
func (l Leftover) For(base string) bool { return l.of == tempBase(base) }

// Target is the base name of the file l was for, when the temp name
// carries that name whole; "" when it carries it cut (tempBase): then ask
// For about each file of the folder.
func (l Leftover) Target() string {
	if n := len(l.of); n > 9 && l.of[n-9] == '~' && isHex(l.of[n-8:]) {
		return ""
	}
	return l.of
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// Leftovers lists the temp files that processes no longer running left in
// dir (see Leftover): those a Batch, RemoveUnchanged or WriteTemp named
// (BASE-PID-NUMBER~PIDNS; an older strata's end at NUMBER). Temp files of
// running processes are not listed. The pid is judged only in the pid
// namespace it names (and in a name that names none): a process of
// another namespace (a devcontainer and its host sharing a repository) is
// under another number here, so its temp file is listed only once it is
// ForeignLeftoverAge old (a live one's was removed while it wrote: its
// command failed, and an agent's save a restore had swapped out was
// recorded and removed instead of put back; a dead one's stayed for good
// where its number ran something else here: attack38c 2).
func Leftovers(dir string) []Leftover { return leftovers(dir, false) }

// YoungForeign lists the temp files in dir of strata processes of another
// pid namespace that are not yet ForeignLeftoverAge old, which Leftovers
// leaves alone: a live writer's in a container sharing the repository, or a
// killed one's, which may hold an agent's save its swap took out, recorded
// only once old enough (status and doctor name them meanwhile).
func YoungForeign(dir string) []Leftover { return leftovers(dir, true) }

func leftovers(dir string, young bool) []Leftover {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Leftover
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		// Prefix BASE-PID-NUMBER: the pid is the second field from the end.
		rest := strings.TrimPrefix(e.Name(), Prefix)
		i := strings.LastIndexByte(rest, '-')
		j := strings.LastIndexByte(rest[:max(i, 0)], '-')
		if j < 0 {
			continue
		}
		pid, err := strconv.Atoi(rest[j+1 : i])
		if err != nil || pid <= 0 {
			continue
		}
		if _, ns, named := strings.Cut(rest[i+1:], "~"); named && ns != proc.PidNS() {
			info, err := e.Info()
			if err != nil {
				continue
			}
			// by the later of its times: a file a swap or a removal moved to
			// the temp name keeps the user's old mtime, but its rename set
			// its ctime (attack38e M2)
			at := max(info.ModTime().UnixNano(), changeTime(info))
			age := time.Since(time.Unix(0, at))
			if youngNow := age < ForeignLeftoverAge && -age < ForeignLeftoverAge; youngNow != young {
				continue // another namespace's pid: judged by age alone (a date ahead counts as far as it is)
			}
		} else if young || proc.Running(pid) {
			continue
		}
		out = append(out, Leftover{Path: filepath.Join(dir, e.Name()), of: rest[:j]})
	}
	return out
}
