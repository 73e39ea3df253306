package engine

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// saveOnDisk records what is on disk for paths a restore is about to
// overwrite or delete, before anything is written: a valid unrecorded
// version goes to the state ref (source record), an invalid one to the
// rejected ref, so nothing a restore replaces is lost. It returns the saved
// versions by path, and the version of every path it read (a blob id, ""
// when absent), now in a ref or equal to the recorded head: the restore
// replaces a file only while it is still that version (Checkouts). A file
// it cannot read as a regular file within max_size (grown or made
// unreadable since the restore's plan checked it, see savable) cannot be
// saved: it returns that file's refusal, and the restore writes nothing.
func (e *Engine) saveOnDisk(paths []config.Kept) (saved map[string]Outcome, seen map[string]string, err error) {
	outs, err := e.Record(paths, state.SourceRecord)
	if err != nil {
		return nil, nil, err
	}
	saved, seen = map[string]Outcome{}, map[string]string{}
	for _, o := range outs {
		if o.unread != nil {
			return nil, nil, e.notSaved(*o.unread)
		}
		if o.read {
			seen[o.Path] = o.seen
		}
		if o.Entry != nil || o.Rejected != nil {
			saved[o.Path] = o
		}
	}
	return saved, seen, nil
}

// savable checks that k's file on disk, which a restore is about to replace
// or remove, can be saved first (saveOnDisk): it is absent, or readable as
// a regular file within max_size. Otherwise its bytes would be in no ref
// once replaced, so the restore is refused before anything is written, with
// a *PathError (IO: it is about what is on disk) naming the file and why.
// Whether it differs from the version to write cannot be known without
// reading it; a version over max_size is never written (restorable), so one
// that is too large always differs.
func (e *Engine) savable(k config.Kept) error {
	if _, prob := e.Read(k); prob != nil {
		return e.notSaved(*prob)
	}
	return nil
}

// notSaved is the refusal of a restore over a file that could not be read
// to be saved first.
func (e *Engine) notSaved(p state.Problem) error {
	why := strings.TrimSuffix(p.Message, "; not stored")
	return &PathError{Path: e.shown(p.Path), Reason: why + "; not restored (it could not be saved first)", IO: true}
}

// markSaved tells each outcome which unrecorded version was saved before
// the restore replaced it.
func markSaved(outs []Outcome, saved map[string]Outcome) {
	for i := range outs {
		if s, ok := saved[outs[i].Path]; ok {
			outs[i].Saved = s.Entry
			if s.Entry == nil {
				outs[i].Saved, outs[i].SavedRejected = s.Rejected, true
			}
			delete(saved, outs[i].Path)
		}
	}
}

// Private is a file a rule would keep but strata withholds as private.
type Private struct {
	Path   string `json:"path"`
	Reason string `json:"reason"` // "ignored by git", or the *.local.json convention
}

// Withheld lists the private files the last scan found (AllPaths, Status
// and Init scan): git ignores them, or they are *.local.json files. They are
// never recorded unless a .strata.yaml rule names them exactly.
func (e *Engine) Withheld() []Private {
	var out []Private
	for _, p := range e.cfg.Withheld() {
		out = append(out, Private{Path: p, Reason: e.cfg.Private(p)})
	}
	return out
}

// Unpublishable checks what a push of head would publish: every path of its
// tree and every path recorded by the commits the remote (at fetched) does
// not have yet. A path the current rules would not keep (a private file, a
// file outside the work tree, a path with "~" or "..") is a problem, unless
// the remote's tree already holds it: pushing it would publish something
// this machine does not mean to share.
//
// The commits the remote lacks are found in-process (PathsSinceQuick).
// That walk, like git's, goes by commit date, so where clocks were skewed
// it may count a commit the remote already has: only when it finds a
// problem is git rev-list asked too (PathsSince), and a problem stands
// only where both count its commit (each counts every commit the remote
// lacks) or the head's tree holds its path.
func (e *Engine) Unpublishable(ctx context.Context, head, fetched string) (state.Problems, error) {
	files, err := e.store.Files(head)
	if err != nil {
		return nil, err
	}
	remote := map[string]string{}
	if fetched != "" {
		if remote, err = e.store.Files(fetched); err != nil {
			return nil, err
		}
	}
	local, err := e.store.PathsSinceQuick(head, fetched)
	if err != nil {
		return nil, err
	}
	for p := range files {
		local[p] = true
	}
	ps := e.unpublishable(local, remote)
	if len(ps) == 0 {
		return nil, nil
	}
	exact, err := e.store.PathsSince(ctx, head, fetched)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ps, func(p state.Problem) bool {
		_, inTree := files[p.Path]
		return !exact[p.Path] && !inTree
	}), nil
}

// unpublishable returns a problem for each local path the remote does not
// hold and the current rules would not keep.
func (e *Engine) unpublishable(local map[string]bool, remote map[string]string) state.Problems {
	var ps state.Problems
	for _, p := range sortedKeys(local) {
		if _, held := remote[p]; held {
			continue
		}
		why := ""
		if strings.HasPrefix(p, "~") || gitstore.ValidPath(p) != nil {
			why = "outside the work tree"
		} else if _, ok := e.cfg.Classify(p); !ok { // a kept path is never private
			why = "no rule keeps it"
			if private := e.cfg.Private(p); private != "" {
				why = "private: " + private
			}
		}
		if why != "" {
			ps = append(ps, state.Problem{Path: p, Message: "recorded on " + e.store.StateRef() + " but not kept by the current rules (" + why + "); sync refuses to publish it, nothing was pushed"})
		}
	}
	return ps
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OutsideTree reports whether a kept path lives outside the work tree
// (Claude Code's auto-memory file under the home directory). Such a file is
// read, validated and written like any kept file but never recorded on the
// state ref, which sync publishes: it is the user's own, not the
// repository's.
func OutsideTree(p string) bool { return strings.HasPrefix(p, "~") }
