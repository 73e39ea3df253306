package engine

import (
	"path"
	"strings"

	"github.com/strata-dev/strata/config"
)

// classified is one remembered config.Classify answer.
type classified struct {
	k   config.Kept
	why string
	// absent: judged while the path's folder was not there (realFolder's
	// absent); the answer holds while it is still not there, which each
	// use asks lstat.
	absent bool
}

// maxClassified bounds how many answers one run remembers (a scan of a
// work tree classifies each entry of the folders it watches).
const maxClassified = 1 << 16

// classifyMemo is config.Config.Memo: config.Classify's answer for a path
// remembered until the engine forgets (Forget; a watcher's next batch), as
// are the resolutions, git's rules and the L2 file it is judged from
// (realDirs, linksAbove, nested, rules). A sync classifies each of 1 000
// received paths four or five times (the merge's check, its journal, the
// write), and each time asked those caches again, ~12 µs a path.
//
// Only what is judged from those caches alone is remembered: a path whose
// folder resolves where it is named (realRel: none of its folders is a link
// to another folder) or that is at the top. A path whose folder is not
// there yet (a folder a sync is about to make), under one that resolves
// where it is named, is judged by its name alone: its answer is remembered
// while the folder is still not there, which each use asks lstat (a sync
// into a clone without .claude classified each received path afresh, and
// resolved the missing folder about 16 times a path). A path through a link
// to another folder is judged afresh each time (linkedByGit walks the links
// on disk, uncached), and so is one whose folder does not resolve (a link
// to nothing), as are the home directory's files.
type classifyMemo struct{ e *Engine }

func (m classifyMemo) Lookup(rel string) (config.Kept, string, bool, func(config.Kept, string)) {
	e := m.e
	e.realMu.Lock()
	c, ok := e.classified[rel]
	gen := e.realGen
	e.realMu.Unlock()
	if ok && (!c.absent || e.notThere(path.Dir(rel))) {
		return c.k, c.why, true, nil
	}
	if strings.HasPrefix(rel, "~/") {
		return config.Kept{}, "", false, nil
	}
	return config.Kept{}, "", false, func(k config.Kept, why string) {
		settled, absent := e.settled(rel)
		if !settled {
			return
		}
		e.realMu.Lock()
		defer e.realMu.Unlock()
		if e.realGen != gen || len(e.classified) >= maxClassified {
			return
		}
		if e.classified == nil {
			e.classified = map[string]classified{}
		}
		e.classified[rel] = classified{k, why, absent}
	}
}

// settled reports whether rel's folder is at the top or was resolved this
// run (realFolder, remembered) to where it is named, inside the work tree;
// or, absent, was found not there under such a folder and is still not.
func (e *Engine) settled(rel string) (settled, absent bool) {
	dir := path.Dir(rel)
	if dir == "." {
		return true, false
	}
	e.realMu.Lock()
	f, ok := e.realRels[dir]
	absent = e.absent[dir]
	e.realMu.Unlock()
	if ok {
		return f.inside && f.rel == dir, false
	}
	return absent && e.notThere(dir), absent
}
