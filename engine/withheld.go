package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/state"
)

// A version recorded while its path was kept, then refused by sync once
// the path became private (skip-worktree set again, `git rm --cached`),
// is the user's secret as long as nothing publishes it. Unpublishable
// refuses it while the path is private; without a note, the refusal would
// end the moment the path is kept again (a template of the file committed,
// the flag dropped), and the next push would publish the path's whole
// history, the refused version with it (attack27-recheck w2, w3). The note
// keeps, per path, the blobs a sync refused as private; Unpublishable goes
// on refusing a push that would publish one of them, whatever the path's
// state now, until `strata forget PATH` takes them out of the unpublished
// history (which clears the note's entry) or the user's strata.keepPrivate
// names the path. One JSON file per view, beside the not-taken note.
type withheldFile struct {
	Paths map[string][]string `json:"paths"`
}

func (e *Engine) withheldPath() string {
	name := "sync-withheld.json"
	if e.display != "" {
		name = "sync-withheld-home.json"
	}
	return filepath.Join(e.store.GitDir(), "strata", name)
}

// withheldLimit bounds the note read: far more than any refusal writes.
const withheldLimit = 16 << 20

// withheld returns the note: path to the blobs sync refused as private. A
// missing note is empty; a damaged or oversized one too (it then only
// forgets, as before the note existed).
func (e *Engine) withheld() map[string][]string {
	data, err := state.ReadRegular(e.withheldPath(), withheldLimit, true)
	if err != nil {
		return map[string][]string{}
	}
	var f withheldFile
	if json.Unmarshal(bytes.TrimSpace(data), &f) != nil || f.Paths == nil {
		return map[string][]string{}
	}
	return f.Paths
}

// withhold adds blobs (path to blobs) to the note (narrowNote takes them
// out). Nothing is written when nothing changes.
func (e *Engine) withhold(add map[string][]string, means string) error {
	notes := e.withheld()
	changed := false
	for p, blobs := range add {
		for _, b := range blobs {
			if b != "" && !slices.Contains(notes[p], b) {
				notes[p], changed = append(notes[p], b), true
			}
		}
		slices.Sort(notes[p])
	}
	if !changed {
		return nil
	}
	err := e.writeNote(e.withheldPath(), len(notes) == 0, withheldFile{Paths: notes}, means)
	var ne *NoteError
	if errors.As(err, &ne) {
		// a sync's refusal stands without its note: the refusal is
		// reported, and beside it that it is not remembered
		// (TakeUnwrittenNotes), rather than an error in its place
		e.noteMu.Lock()
		if !slices.ContainsFunc(e.unwrittenNotes, func(n *NoteError) bool { return n.Path == ne.Path }) {
			e.unwrittenNotes = append(e.unwrittenNotes, ne)
		}
		e.noteMu.Unlock()
		return nil
	}
	return err
}

// narrowNote keeps, of each of paths' noted versions, those a commit the
// state ref reaches still records — along any parent, a merge's second
// included (after forget: the versions a remote holds) — and drops the
// others, in one write.
func (e *Engine) narrowNote(ctx context.Context, paths []string) error {
	notes := e.withheld()
	var noted []string
	for _, p := range paths {
		if _, ok := notes[p]; ok {
			noted = append(noted, p)
		}
	}
	if len(noted) == 0 {
		return nil
	}
	present := map[string]map[string]bool{}
	if head, err := e.store.Head(e.store.StateRef()); err == nil {
		if present, err = e.store.VersionsBeyond(ctx, head, nil, noted); err != nil {
			return err
		}
	}
	changed := false
	for _, p := range noted {
		var still []string
		for _, b := range notes[p] {
			if present[p][b] {
				still = append(still, b)
			}
		}
		switch {
		case len(still) == len(notes[p]):
			continue
		case len(still) == 0:
			delete(notes, p)
		default:
			notes[p] = still
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return e.writeNote(e.withheldPath(), len(notes) == 0, withheldFile{Paths: notes}, refusedMeans)
}

// refusedMeans and foundMeans are what a withheld note that cannot be
// written costs, after a sync's refusal and after a scan's finding
// (NotePrivate).
const (
	refusedMeans = "the refusal is not remembered: once the file is kept again, a later sync will publish the version refused now"
	foundMeans   = "the versions found private are not remembered: remove it while the file is still private, and the next record notes them; once the file is kept again, a later sync will publish them"
)

// TakeUnwrittenNotes returns, as warnings, the notes of refusals this
// engine could not write since the last call (withhold), and forgets them.
func (e *Engine) TakeUnwrittenNotes() state.Problems {
	e.noteMu.Lock()
	defer e.noteMu.Unlock()
	var ps state.Problems
	for _, ne := range e.unwrittenNotes {
		msg, _ := strings.CutPrefix(ne.Error(), state.ShownPath(ne.Path)+": ")
		ps = append(ps, state.Problem{Path: ne.Path, Message: msg, Warning: true})
	}
	e.unwrittenNotes = nil
	return ps
}

// NotePrivate notes the versions of private files that no sync has
// refused yet: for each of found (the private files a scan or a watcher
// found) whose reason git's index decides (config.IndexDecides: git does
// not track it, has it only staged, ignores it, or is told to ignore its
// local changes) and that the state ref records, the versions of it
// recorded by commits no remote's tracking ref reaches, and that no
// tracking ref's tree holds, are added to the note, as a sync refusing
// them would add them. Without it, a version recorded while the file was
// kept (skip-worktree dropped for a moment), made private again and kept
// again later (the template put back, the flag dropped for good) with no
// sync in between went out with the path's history (attack27-withheld
// a3). A path is looked at again only when a newer commit records it (a
// watcher's every rescan asks git nothing again), and not when the note
// already holds the version the state ref's head records; when the head
// records its deletion, the versions before it are looked at all the
// same (attack28 F2). The home view notes nothing.
func (e *Engine) NotePrivate(ctx context.Context, found []Private) error {
	if e.display != "" || len(found) == 0 {
		return nil
	}
	head, err := e.store.Head(e.store.StateRef())
	if err != nil {
		return nil // nothing recorded yet (or unreadable: a sync says so)
	}
	notes := e.withheld()
	var ask []string
	newest := map[string]string{} // path -> the newest commit recording it
	e.privateMu.Lock()
	if e.privateSeen == nil {
		e.privateSeen, e.privateAt = map[string]string{}, map[string]string{}
	}
	for _, p := range found {
		if !config.IndexDecides(p.Reason) || e.privateAt[p.Path] == head {
			continue // looked at under this very head
		}
		ents, err := e.store.Log(e.store.StateRef(), state.LogQuery{Path: p.Path, Limit: 1})
		if err != nil {
			continue // a sync refuses what a damaged history hides
		}
		if len(ents) == 0 || e.privateSeen[p.Path] == ents[0].Commit {
			e.privateAt[p.Path] = head // never recorded, or looked at since its last record
			continue
		}
		if blob, err := e.store.BlobID(head, p.Path); err == nil && slices.Contains(notes[p.Path], blob) {
			e.privateAt[p.Path] = head // the note holds the head's version, and with it what came before
			continue
		}
		ask, newest[p.Path] = append(ask, p.Path), ents[0].Commit
	}
	e.privateMu.Unlock()
	if len(ask) == 0 {
		return nil
	}
	tracking, err := e.store.TrackingRefs()
	if err != nil {
		return err
	}
	refs := slices.Sorted(maps.Keys(tracking))
	versions, err := e.store.VersionsBeyond(ctx, head, refs, ask)
	if err != nil {
		return err
	}
	add := map[string][]string{}
	for _, p := range ask {
		for v := range versions[p] {
			published := false
			for _, ref := range refs {
				if b, err := e.store.BlobID(ref, p); err == nil && b == v {
					published = true
					break
				}
			}
			if !published {
				add[p] = append(add[p], v)
			}
		}
	}
	if err := e.withhold(add, foundMeans); err != nil {
		return err
	}
	e.privateMu.Lock()
	defer e.privateMu.Unlock()
	maps.Copy(e.privateSeen, newest)
	for p := range newest {
		e.privateAt[p] = head
	}
	return nil
}

// TurnedPrivate lists the files the state ref's head records that the
// rules, as last read, hold private for a reason git's index decides
// (config.IndexDecides): a watcher asks when the index changes, since
// `git update-index --skip-worktree` or `git rm --cached` makes a kept
// file private with no event of the file's own (attack28 F5), and
// NotePrivate notes their versions.
func (e *Engine) TurnedPrivate() ([]Private, error) {
	if e.display != "" {
		return nil, nil
	}
	_, files, err := e.recorded()
	if err != nil {
		return nil, err
	}
	var out []Private
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if OutsideTree(p) {
			continue
		}
		if why := e.cfg.Private(p); config.IndexDecides(why) {
			out = append(out, Private{Path: p, Reason: why})
		}
	}
	return out, nil
}

// NoteScanned is NotePrivate over what the last scan found private
// (Withheld) and the recorded files the rules hold private now
// (TurnedPrivate: one deleted from disk is in no scan), as `strata
// record` and a watcher's rescan note them (attack28-recheck B4).
func (e *Engine) NoteScanned(ctx context.Context) error {
	found := e.Withheld()
	turned, err := e.TurnedPrivate()
	if err != nil {
		return err
	}
	for _, p := range turned {
		if !slices.ContainsFunc(found, func(f Private) bool { return f.Path == p.Path }) {
			found = append(found, p)
		}
	}
	return e.NotePrivate(ctx, found)
}
