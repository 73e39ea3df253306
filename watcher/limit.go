package watcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// pollDir polls dir, whose real directory is real, in place of a watch the
// inotify limit refused: tree for a directory of the tree, otherwise only
// its Options.Extra files are looked at. What it holds now is the base the
// polls compare with: the rescan the failed watch comes with (at start,
// periodically) reads it as it is, and a directory new to the tree was
// scanned by addTree.
func (w *Watcher) pollDir(dir, real string, tree bool) {
	if pd := w.polled[dir]; pd != nil {
		pd.tree = pd.tree || tree
		return
	}
	pd := &polledDir{real: real, tree: tree}
	pd.seen, _ = w.snapshot(dir, pd)
	w.polled[dir] = pd
	w.pollDirty = true
}

// snapshot returns the stamps of dir's entries (of its extra files only,
// for a directory not of the tree), and false when a tree directory could
// not be read because it is gone.
func (w *Watcher) snapshot(dir string, pd *polledDir) (map[string]stamp, bool) {
	out := map[string]stamp{}
	if !pd.tree {
		for p := range w.extra {
			if filepath.Dir(p) == dir {
				if fi, err := os.Lstat(p); err == nil {
					out[filepath.Base(p)] = stampOf(fi)
				}
			}
		}
		return out, true
	}
	entries, err := os.ReadDir(pd.real)
	if err != nil {
		return out, !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			out[e.Name()] = stampOf(fi)
		}
	}
	return out, true
}

func stampOf(fi fs.FileInfo) stamp {
	s := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
		s.ctime = st.Ctim.Nano()
	}
	return s
}

// poll looks at every polled directory and applies what changed since the
// last look as the events a watch would have delivered: a kept file
// written, made or removed is pending (debounced as any path), a directory
// made is watched (or polled) and scanned, a link where a watched
// directory could be asks for a rescan. A tree directory gone is polled no
// more; the kept files it held are reported, to be read as deleted.
func (w *Watcher) poll(now time.Time) {
	dirs := make([]string, 0, len(w.polled))
	for d := range w.polled {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs) // a parent before what it holds
	for _, dir := range dirs {
		pd := w.polled[dir]
		if pd == nil {
			continue // watched meanwhile
		}
		seen, ok := w.snapshot(dir, pd)
		if !ok {
			delete(w.polled, dir)
			w.pollDirty = true
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
		if made && w.watchDir(rel) && !w.watched[abs] && w.polled[abs] == nil {
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
