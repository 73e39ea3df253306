package watcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The inotify limits, and the files the kernel shows them in.
const (
	maxWatchesKey   = "fs.inotify.max_user_watches"
	maxInstancesKey = "fs.inotify.max_user_instances"
)

// procSys is where the kernel shows its sysctls; a variable for tests.
var procSys = "/proc/sys"

// newSource makes the event source; a variable so tests can make it fail
// as inotify_init1 does at the instance limit.
var newSource = newFsnotifySource

// limit reads the sysctl key (fs.inotify.max_user_watches) and returns the
// text naming it with its value and where it was read: "KEY=N, read from
// FILE", or "KEY, unreadable: …".
func limit(key string) (text string, n int) {
	file := filepath.Join(procSys, filepath.FromSlash(strings.ReplaceAll(key, ".", "/")))
	data, err := os.ReadFile(file)
	if err == nil {
		if n, err = strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			return fmt.Sprintf("%s=%d, read from %s", key, n, file), n
		}
	}
	return fmt.Sprintf("%s, unreadable from %s", key, file), 0
}

// raised is the value a limit at n is told to be raised to: twice n, and
// at least least.
func raised(n, least int) int { return max(2*n, least) }

// LimitError is the error of a watcher that cannot be made because an
// inotify limit is reached (EMFILE from inotify_init1). Error is the one
// line naming the limit and the way out.
type LimitError struct {
	msg string
	err error
}

func (e *LimitError) Error() string { return e.msg }
func (e *LimitError) Unwrap() error { return e.err }

// translateInit turns EMFILE from making the inotify instance into a
// LimitError naming fs.inotify.max_user_instances; other errors are
// returned as they are.
func translateInit(err error) error {
	if !errors.Is(err, syscall.EMFILE) {
		return err
	}
	text, n := limit(maxInstancesKey)
	return &LimitError{err: err, msg: fmt.Sprintf("inotify instance limit reached (%s), or this process's open-file limit (ulimit -n): "+
		"raise it with sysctl %s=%d, or stop other programs watching files", text, maxInstancesKey, raised(n, 1024))}
}

// pollStride is how many entries of a polled directory one poll period
// pays for: a directory whose entries changed is listed again no more
// often than once every period per pollStride entries (a folder of 100 000
// entries, every 10 periods), while its known kept files are looked at
// every period.
const pollStride = 10_000

// racyStamp is how long before a listing a directory's own mtime and
// ctime must lie for a poll to trust them unchanged: a file made in the
// same tick of the file system's clock as the change before it leaves
// them as they were (git's "racy" index entries), so a directory changed
// that recently is listed again. A variable for tests.
var racyStamp = 2 * time.Second

// pollDir polls dir, whose real directory is real, in place of a watch the
// inotify limit refused: tree for a directory of the tree, otherwise only
// its Options.Extra files are looked at. What it holds now is the base the
// polls compare with: the rescan the failed watch comes with (at start,
// periodically) reads it as it is, and a directory new to the tree was
// scanned by addTree. A tree directory polled already goes on being
// polled from its last look, unless it is another directory now (or a
// link): that one is gone, and the new one is polled afresh.
func (w *Watcher) pollDir(dir, real string, tree bool, now time.Time) {
	if pd := w.polled[dir]; pd != nil {
		if !tree || pd.tree && pd.real == real && w.stillPolled(dir, pd) {
			return
		}
		w.unpoll(dir, now)
	}
	pd := &polledDir{real: real, tree: tree}
	seen, state := w.snapshot(dir, pd, now, true)
	if state != pollOK {
		return // a link, or gone already: addTree's read judges it
	}
	pd.seen = seen
	w.polled[dir] = pd
	w.pollDirty = true
}

// What a poll found of a polled tree directory.
type pollState int

const (
	pollOK      pollState = iota
	pollGone              // removed (or no directory any more)
	pollSwapped           // a link now, another directory, or reached out of the work tree only
)

// errPollLink is openPolled's error for a polled directory that is a
// symbolic link now; errPollOther for one that is another directory.
var (
	errPollLink  = errors.New("a symbolic link now")
	errPollOther = errors.New("another directory now")
)

// openPolled opens the tree directory pd polls as its watch would see it:
// through an os.Root at the work tree, so no link leads out of it, and
// not through a link of its own (Lstat). It returns the directory open and
// its own stamp, device and inode.
func (w *Watcher) openPolled(pd *polledDir) (sub *os.Root, self stamp, dev uint64, err error) {
	rel, ok := w.rel(pd.real)
	if !ok {
		return nil, stamp{}, 0, errPollOther
	}
	root, err := os.OpenRoot(w.root)
	if err != nil {
		return nil, stamp{}, 0, err
	}
	defer root.Close()
	name := filepath.FromSlash(rel)
	fi, err := root.Lstat(name)
	switch {
	case err != nil:
		return nil, stamp{}, 0, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, stamp{}, 0, errPollLink
	case !fi.IsDir():
		return nil, stamp{}, 0, syscall.ENOTDIR
	}
	if sub, err = root.OpenRoot(name); err != nil {
		return nil, stamp{}, 0, err
	}
	if fi, err = sub.Stat("."); err != nil {
		sub.Close()
		return nil, stamp{}, 0, err
	}
	self = stampOf(fi)
	dev = devOf(fi)
	if pd.ino != 0 && (self.ino != pd.ino || dev != pd.dev) {
		sub.Close()
		return nil, stamp{}, 0, errPollOther
	}
	return sub, self, dev, nil
}

// stillPolled reports whether the tree directory dir, polled as pd, is
// still the one its poll began on, reached as it was.
func (w *Watcher) stillPolled(dir string, pd *polledDir) bool {
	if pd.real != dir {
		if r, err := w.resolve(dir); err != nil || r != pd.real {
			return false // the followed link was moved or points elsewhere now
		}
	}
	sub, _, _, err := w.openPolled(pd)
	if err != nil {
		return false
	}
	sub.Close()
	return true
}

// snapshot returns the stamps of the entries of dir a poll looks at
// (pollsEntry; its extra files only, for a directory not of the tree).
// A tree directory is read through openPolled, and its state says whether
// it is gone or swapped. Its entries are listed only when its own mtime or
// ctime changed since the last listing (or lay within racyStamp of it) and
// no more often than pollStride allows, unless list; otherwise only the
// entries seen at the last look are lstat'ed. So an unchanged directory
// costs its own stat and one lstat per kept file or folder it holds, however
// many other entries it has.
func (w *Watcher) snapshot(dir string, pd *polledDir, now time.Time, list bool) (map[string]stamp, pollState) {
	out := map[string]stamp{}
	if !pd.tree {
		for p := range w.extra {
			if filepath.Dir(p) == dir {
				w.pollWork.lstats++
				if fi, err := os.Lstat(p); err == nil {
					out[filepath.Base(p)] = stampOf(fi)
				}
			}
		}
		return out, pollOK
	}
	sub, self, dev, err := w.openPolled(pd)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
			return pd.seen, pollOK // unreadable for now: nothing learned
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return out, pollGone
		}
		w.log.Debug("poll", "dir", dir, "err", err)
		return out, pollSwapped // a link (out of the tree or not), or another directory
	}
	defer sub.Close()
	if pd.ino == 0 {
		pd.dev, pd.ino = dev, self.ino
	}
	trusted := !pd.listed.IsZero() && self.mtime == pd.self.mtime && self.ctime == pd.self.ctime &&
		max(self.mtime, self.ctime) < pd.listed.Add(-racyStamp).UnixNano()
	if !trusted && (list || pd.wait == 0) {
		if d, err := sub.Open("."); err == nil {
			entries, err := d.ReadDir(-1)
			d.Close()
			if err == nil {
				w.pollWork.listed += len(entries)
				rel, _ := w.rel(dir)
				for _, e := range entries {
					if w.pollsEntry(dir, rel, e.Name(), e.Type()) {
						w.pollWork.lstats++
						if fi, err := sub.Lstat(e.Name()); err == nil {
							out[e.Name()] = stampOf(fi)
						}
					}
				}
				pd.self, pd.listed = self, now
				pd.wait = max(1, len(entries)/pollStride) - 1
				return out, pollOK
			}
		}
	}
	// No entry was added, removed or renamed since the last listing (or the
	// next listing is not due): those seen then are looked at again.
	pd.wait = max(0, pd.wait-1)
	for name := range pd.seen {
		w.pollWork.lstats++
		if fi, err := sub.Lstat(name); err == nil {
			out[name] = stampOf(fi)
		}
	}
	return out, pollOK
}

// pollsEntry reports whether a poll of the tree directory dir (rel under
// Root) looks at its entry name of type typ: an extra file, a kept file, or
// a folder or link where a watched folder could be. The changes of no
// other entry are acted on (a watched directory's events on them only
// postpone its pending kept files, which a poll reports by their own
// changes), so the others are never lstat'ed.
func (w *Watcher) pollsEntry(dir, rel, name string, typ fs.FileMode) bool {
	r := path.Join(rel, name)
	return w.extra[filepath.Join(dir, name)] || w.match(r) ||
		typ&(fs.ModeDir|fs.ModeSymlink) != 0 && w.watchDir(r)
}

// unpoll stops polling the tree directory dir, and the tree directories
// polled below it, as the watches of a directory removed would go: the
// kept files last seen there are reported, to be read as deleted.
func (w *Watcher) unpoll(dir string, now time.Time) {
	prefix := dir + string(filepath.Separator)
	for d, pd := range w.polled {
		if d != dir && !(pd.tree && strings.HasPrefix(d, prefix)) {
			continue
		}
		delete(w.polled, d)
		w.pollDirty = true
		for name := range pd.seen {
			w.polledChange(d, pd, name, stamp{}, false, now)
		}
	}
}

func stampOf(fi fs.FileInfo) stamp {
	s := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
		s.ctime = ctimeOf(st)
	}
	return s
}

// devOf returns the device fi lies on.
func devOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// poll looks at every polled directory and applies what changed since the
// last look as the events a watch would have delivered: a kept file
// written, made or removed is pending (debounced as any path), a directory
// made is watched (or polled) and scanned, a link where a watched
// directory could be asks for a rescan. A tree directory gone, or replaced
// by a link or another directory, is polled no more (unpoll), as its watch
// would have gone; one replaced also asks for a rescan. With final (at
// stop) every directory whose entries changed is listed.
func (w *Watcher) poll(now time.Time, final bool) {
	dirs := make([]string, 0, len(w.polled))
	for d := range w.polled {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs) // a parent before what it holds
	for _, dir := range dirs {
		pd := w.polled[dir]
		if pd == nil {
			continue // watched meanwhile, or gone with its parent
		}
		seen, state := w.snapshot(dir, pd, now, final)
		if state != pollOK {
			w.unpoll(dir, now)
			if state == pollSwapped {
				w.askRescan(filepath.Dir(dir), now)
			}
			continue
		}
		old := pd.seen
		pd.seen = seen
		for name, s := range seen {
			if o, had := old[name]; !had || o != s {
				w.polledChange(dir, pd, name, s, !had || o.ino != s.ino, now)
			}
		}
		for name := range old {
			if _, ok := seen[name]; !ok {
				w.polledChange(dir, pd, name, stamp{}, false, now)
			}
		}
	}
}

// polledChange applies the change a poll found of the entry name of the
// polled directory dir: s is what it is now (zero when gone), made when it
// is new (or another file under that name).
func (w *Watcher) polledChange(dir string, pd *polledDir, name string, s stamp, made bool, now time.Time) {
	abs := filepath.Join(dir, name)
	if w.extra[abs] {
		w.touch(abs, dir, now)
		return
	}
	if !pd.tree {
		return
	}
	rel, inRoot := w.rel(abs)
	if !inRoot {
		return
	}
	switch {
	case s.mode.IsDir():
		// made: new, or another directory under the name, which replaces
		// a poll of the one before (pollDir)
		if made && w.watchDir(rel) && !w.watched[abs] {
			w.addTree(abs, filepath.Join(pd.real, name), rel, true, now)
		}
		return // a folder's own change is a change of what it holds: seen there
	case s.mode&fs.ModeSymlink != 0 && w.watchDir(rel) && !w.match(rel):
		if real, ok := w.followed(abs, rel); ok {
			w.addTree(abs, real, rel, true, now)
		}
		w.askRescan(dir, now)
		return
	}
	if w.match(rel) {
		w.touch(rel, dir, now)
	}
}

// notePolled logs the inotify limit's warning when folders are polled that
// it did not name yet, and a note when every folder is watched again; and
// runs the poll's ticker while any folder is polled.
func (w *Watcher) notePolled() {
	w.pollDirty = false
	switch {
	case len(w.polled) > 0 && !w.pollRunning:
		w.pollTicker.Reset(w.pollEvery)
		w.pollRunning = true
	case len(w.polled) == 0 && w.pollRunning:
		w.pollTicker.Stop()
		w.pollRunning = false
	}
	if len(w.polled) == 0 {
		if len(w.warned) > 0 {
			w.log.Info("inotify watches added: no folder is polled any more")
			w.warned = nil
		}
		return
	}
	fresh := false
	for d := range w.polled {
		if !w.warned[d] {
			fresh = true
		}
	}
	if !fresh {
		return
	}
	w.warned = make(map[string]bool, len(w.polled))
	var names []string
	for d := range w.polled {
		w.warned[d] = true
		n := d
		if rel, ok := w.rel(d); ok {
			n = rel
		}
		names = append(names, n)
	}
	slices.Sort(names)
	w.log.Warn(limitWarning(names, w.pollEvery))
}

// limitWarning is the one line a watcher logs when folders are polled for
// the inotify watch limit.
func limitWarning(names []string, every time.Duration) string {
	text, n := limit(maxWatchesKey)
	what := names[0] + " is"
	if len(names) > 1 {
		shown := names[:min(len(names), 3)]
		what = fmt.Sprintf("%d folders (%s", len(names), strings.Join(shown, ", "))
		if len(names) > len(shown) {
			what += fmt.Sprintf(" and %d more", len(names)-len(shown))
		}
		what += ") are"
	}
	return fmt.Sprintf("inotify watch limit reached (%s): %s polled every %s instead; raise it with sysctl %s=%d",
		text, what, every, maxWatchesKey, raised(n, 524288))
}
