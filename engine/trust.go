package engine

import (
	"cmp"
	"context"
	"maps"
	"os"
	"path/filepath"
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
// rejected ref (or, already there, found on it), so nothing a restore
// replaces is lost. It returns the saved versions by path, and the
// version of every path it read (a blob id, "" when absent), now in a
// ref or equal to the recorded head: the restore
// replaces a file only while it is still that version (Checkouts). A file
// it cannot read as a regular file within max_size (grown or made
// unreadable since the restore's plan checked it, see savable) cannot be
// saved: it returns that file's refusal, and the restore writes nothing.
//
// A file whose merge with another version is owed (a push, a sync) is, for
// a restore (replace), recorded as it is: the restore replaces it, and a
// version left unrecorded was in no ref (attack42 F1: a restore during the
// wait for a line threw the half line away). For a write that builds on
// the file (Put: memory add, the protocol), it is left unrecorded and
// unseen, so the write refuses (ErrChanged) and is tried again once the
// merge is made: recorded as it is, the edit took the other machine's
// lines out of the head, and the merge owed was dropped.
func (e *Engine) saveOnDisk(paths []config.Kept, replace bool) (saved map[string]Outcome, seen map[string]string, err error) {
	e.noteHead()
	outs, err := e.recordOver(paths, state.SourceRecord, nil, nil, replace)
	if err != nil {
		return nil, nil, err
	}
	saved, seen = map[string]Outcome{}, map[string]string{}
	for _, o := range outs {
		if o.unread != nil {
			return nil, nil, e.notSaved(*o.unread)
		}
		if o.read && !o.unmerged {
			seen[o.Path] = o.seen
		}
		if o.read && o.Rejected == nil && o.Problems.Invalid() && !OutsideTree(o.Path) {
			// invalid, and on the rejected ref already (an earlier record
			// or the watcher kept it there): that entry is where its bytes
			// are, named as a version saved now would be (attack27 F2)
			o.Rejected = e.rejectedVersion(o.Path, o.seen)
			o.savedEarlier = o.Rejected != nil
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
				outs[i].savedEarlier = s.savedEarlier
			}
			delete(saved, outs[i].Path)
		}
	}
}

// Private is a file a rule would keep but strata withholds as private.
type Private struct {
	Path   string `json:"path"`
	Reason string `json:"reason"` // "ignored by git", "git filters it (filter=NAME)", the *.local.json convention, config.WhyHidden, config.WhyUntracked...
}

// Nested reports whether p is withheld as a file of another git repository
// nested in the work tree: no setting keeps it, that repository keeps its
// own files.
func (p Private) Nested() bool { return strings.HasPrefix(p.Reason, config.WhyNested) }

// Never reports whether no setting keeps p: a nested repository's file
// (Nested), or one under a symbolic link to a folder above it (a loop).
func (p Private) Never() bool { return config.NeverKept(p.Reason) }

// KeepCommand is the command that keeps p anyway, its path one shell word:
// only the user's git configuration (strata.keepPrivate) keeps a private
// file, never a .strata.yaml rule. It is "" for a nested repository's file
// or one under a link loop, which nothing keeps.
func (p Private) KeepCommand() string {
	if p.Never() {
		return ""
	}
	return "git config --add strata.keepPrivate " + state.ShellWord(p.Path)
}

// NotKept is why p is not kept and what keeps it, as every line naming a
// private file says it: "not kept (private: REASON); to keep it anyway:
// git config --add strata.keepPrivate PATH" — init's and status's lines put
// the path after the parenthesis, a refusal of a named path (validate PATH,
// record PATH) before "not kept". then is "" when nothing is to be done.
func (p Private) NotKept() (why, then string) {
	switch {
	case p.Nested():
		return "not kept (private: " + p.Reason + ")", "that repository keeps its own files"
	case p.Never():
		return "not kept (" + p.Reason + ")", "" // a link loop: nothing private about it
	case strings.Contains(p.Reason, "strata.keepPrivate"):
		return "not kept (private: " + p.Reason + ")", "" // the reason says how to keep it
	}
	return "not kept (private: " + p.Reason + ")", "to keep it anyway: " + p.KeepCommand()
}

// Withheld lists the private files the last scan found (AllPaths, Status
// and Init scan): git ignores or filters them, they are *.local.json files,
// git does not track them and only a .strata.yaml rule keeps them, or they
// belong to a git repository nested in the work tree. Only the
// user's git configuration (strata.keepPrivate) keeps one, and never a
// nested repository's.
func (e *Engine) Withheld() []Private {
	var out []Private
	for _, p := range e.cfg.Withheld() {
		out = append(out, Private{Path: p, Reason: e.cfg.Private(p)})
	}
	return out
}

// PassedOverUnread returns the withheld files a record passes over only
// because the rules that say what is private cannot be read (an empty
// refs/strata/gitrules, a HEAD whose commit is missing: every file then
// counts as private) and whose version on disk is not the one the state
// ref's head holds: an edit of a recorded file that goes unrecorded. A
// record that recorded nothing said nothing of them (attack37d L10). The
// head's tree is read only when such a file is withheld.
func (e *Engine) PassedOverUnread() []Private {
	var unread []Private
	for _, p := range e.Withheld() {
		if config.RulesUnread(p.Reason) {
			unread = append(unread, p)
		}
	}
	if len(unread) == 0 {
		return nil // the usual case: nothing more read
	}
	_, files, err := e.recorded()
	if err != nil {
		return nil
	}
	var out []Private
	for _, p := range unread {
		blob, recorded := files[p.Path]
		if !recorded {
			continue
		}
		if k, ok := e.cfg.Classify(p.Path); ok {
			if f, prob := e.Read(k); prob == nil && f.Exists && f.ID() == blob {
				continue // as recorded: nothing passed over
			}
		}
		out = append(out, p)
	}
	return out
}

// HeadHolds reports whether the state ref's head holds a version of path.
func (e *Engine) HeadHolds(path string) bool {
	_, files, err := e.recorded()
	_, ok := files[path]
	return err == nil && ok
}

// Unpublishable checks what a push of head would publish beyond what the
// remote (at fetched) holds: each path of head's tree at a version other
// than the remote's, and each path recorded by the commits the remote lacks.
// Such a path the current rules would not keep (a private file, a file
// outside the work tree, a path with "~" or "..") is a problem, unless every
// version of it the push would publish is the one the remote's tree already
// holds: a path made private after it was published may go out again only as
// that exact version (a recorded deletion publishes nothing), so neither a
// new secret in it nor a path name a hostile pusher planted on the remote
// disables the check.
//
// Whether git ignores a path, and whether it filters it (a clean/smudge
// driver: git publishes only the cleaned, encrypted form), is asked of git
// itself here (one `git check-ignore` and one `git check-attr filter` over
// the paths the rules would keep, Store.CheckIgnore and Store.CheckFilter),
// so a source of git's rules that the in-process matchers read differently
// (gitstore.Ignores, gitstore.Attributes) cannot let such a file out; so is
// whether git tracks a path that only a .strata.yaml rule keeps, and
// whether git is told to ignore the local changes of any kept path
// (skip-worktree, assume-unchanged): one `git ls-files -v` over the paths,
// Store.CheckTracked, beside the other two. Such
// a file is published only when the user's strata.keepPrivate names it. The home view, whose
// tree names are not work-tree paths, is not asked about.
//
// The commits the remote lacks are found in-process (PathsSinceQuick).
// That walk, like git's, goes by commit date, so where clocks were skewed
// it may count a commit the remote already has: only when it finds a
// problem is git rev-list asked too (VersionsSince), and a problem stands
// only where the head's tree holds its path at a version other than the
// remote's, or a commit rev-list counts (it counts every commit the remote
// lacks) records such a version.
//
// A version the remote itself published earlier stands neither: one the
// tree of a head the tracking ref (tracking) held before holds at its path,
// or one only commits reachable from such a head record (the tracking
// ref's reflog, its last pastHeads heads). A pusher who rewinds the remote
// past a path no rule keeps here would otherwise stop every later sync of
// this machine until `strata forget` (attack19-remote 7); publishing again
// what the remote published leaks nothing of this machine's.
func (e *Engine) Unpublishable(ctx context.Context, head, fetched, tracking string) (state.Problems, error) {
	return e.unpublishableSince(ctx, head, fetched, tracking, true)
}

// UnpublishablePlan is Unpublishable for a dry run: the same problems,
// and nothing noted (the versions refused are not withheld).
func (e *Engine) UnpublishablePlan(ctx context.Context, head, fetched, tracking string) (state.Problems, error) {
	return e.unpublishableSince(ctx, head, fetched, tracking, false)
}

// unpublishableSince is Unpublishable; with note, the private versions
// refused are withheld.
func (e *Engine) unpublishableSince(ctx context.Context, head, fetched, tracking string, note bool) (state.Problems, error) {
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
	for p, blob := range files {
		if remote[p] != blob {
			local[p] = true
		}
	}
	if e.display != "" {
		// the home view: a path but the auto-memory file is none of this
		// machine's (its record writes that file only); it came from a
		// remote's home history, which a sync drops (gitstore.DropForeign),
		// and a commit that still names it, an older strata's merge or
		// one made by hand, is no leak: refusing it stopped every home
		// sync with another remote for good, with no way out (attack36c
		// H1, H2: no rule applies to the home view, forget does not
		// reach it)
		maps.DeleteFunc(local, func(p string, _ bool) bool { return p != HomeName })
	}
	why, err := e.unpublishable(ctx, local)
	if err != nil {
		return nil, err
	}
	// paths kept now whose versions an earlier sync refused as private
	// (withheld): the push may not publish those versions either
	held := e.withheld()
	var again []string
	for p := range held {
		if _, private := why[p]; !private && local[p] && !e.keepPrivate(p) {
			again = append(again, p)
		}
	}
	slices.Sort(again)
	if len(why) == 0 && len(again) == 0 {
		return nil, nil
	}
	var pastTrees []map[string]string // the trees of the remote's earlier heads
	var past []string
	for _, c := range e.store.PastHeads(tracking, pastHeads) {
		if c == fetched || !e.store.HasCommit(c) {
			continue
		}
		t, err := e.store.Files(c)
		if err != nil {
			// a head whose tree cannot be read (one a sync refused: a tree
			// nested too deep, an unsafe entry; its fetch left it in the
			// reflog) vouches for nothing: passed over, never a failure of
			// every later sync (attack40 F2)
			continue
		}
		past, pastTrees = append(past, c), append(pastTrees, t)
	}
	publishedAt := func(p, blob string) bool {
		if blob == remote[p] {
			return true
		}
		for _, t := range pastTrees {
			if t[p] == blob {
				return true
			}
		}
		return false
	}
	newInTree := func(p string) bool { blob, in := files[p]; return in && !publishedAt(p, blob) }
	var recheck []string
	for p := range why {
		// a private path's versions are wanted even where its tree's
		// version already stands: each is noted as refused (withheld)
		if !newInTree(p) || strings.HasPrefix(why[p], "private: ") {
			recheck = append(recheck, p)
		}
	}
	recheck = append(recheck, again...)
	var versions map[string]map[string]bool
	if len(recheck) > 0 {
		if versions, err = e.store.VersionsSince(ctx, head, fetched, recheck); err != nil {
			return nil, err
		}
		// only what no earlier head of the remote reaches is unpublished
		for _, c := range past {
			since, err := e.store.VersionsSince(ctx, head, c, recheck)
			if err != nil {
				return nil, err
			}
			for p, vs := range versions {
				for v := range vs {
					if !since[p][v] {
						delete(vs, v)
					}
				}
			}
		}
	}
	var ps state.Problems
	refused := map[string][]string{} // the versions refused here as private, noted (withheld)
	for _, p := range slices.Sorted(maps.Keys(why)) {
		stands := newInTree(p)
		for v := range versions[p] {
			stands = stands || !publishedAt(p, v)
		}
		// a refusal only because the rules could not be read is not
		// noted: nothing is known against the file (config.RulesUnread)
		if stands && strings.HasPrefix(why[p], "private: ") && !config.RulesUnread(why[p]) {
			if newInTree(p) {
				refused[p] = append(refused[p], files[p])
			}
			for v := range versions[p] {
				if !publishedAt(p, v) {
					refused[p] = append(refused[p], v)
				}
			}
		}
		if stands {
			way := "take its unpublished versions out: strata forget " + state.ShellWord(p)
			if why[p] == "no rule keeps it" {
				way = "keep it again with a rule in " + ConfigFile + ", or " + way
			}
			if config.RulesUnread(why[p]) {
				way = "it is published once they can be read"
				if strings.Contains(why[p], e.store.RulesRef()+" unreadable") {
					way = "git update-ref -d " + e.store.RulesRef() + " forgets the damaged record, then sync again"
				}
			}
			ps = append(ps, state.Problem{Path: p, Message: "recorded on " + e.store.StateRef() + " but not kept by the current rules (" + why[p] + "); sync refuses to publish it, nothing was pushed (" + way + ")"})
		}
	}
	var staged map[string]gitstore.StagedFile
	if len(again) > 0 {
		if staged, err = e.store.Staged(""); err != nil {
			return nil, err
		}
	}
	for _, p := range again {
		// a refused version the user has given to git since (staged, or
		// committed in a commit HEAD reaches: `git add` of those very
		// bytes) is shared by their choice, as git shares it; any other
		// stays withheld
		withheld := func(v string) bool {
			return slices.Contains(held[p], v) && !publishedAt(p, v) && v != staged[p].Blob && !e.store.InHistory(ctx, p, v)
		}
		var out []string // the withheld versions this push would publish
		if blob, in := files[p]; in && withheld(blob) {
			out = append(out, blob)
		}
		for v := range versions[p] {
			if withheld(v) {
				out = append(out, v)
			}
		}
		if len(out) == 0 {
			continue
		}
		way := "take its unpublished versions out: strata forget " + state.ShellWord(p)
		if other, this, err := e.elsewhere(ctx, head, tracking, p, out); err != nil {
			return nil, err
		} else if other != "" {
			// another remote holds them already (published there while
			// strata.keepPrivate named the path): `forget PATH` finds
			// nothing unpublished, only --remote takes them out of what
			// this remote gets (attack28 F4)
			way = "another remote, " + other + ", holds it already: take it out of what this remote gets: strata forget " + state.ShellWord(p) + " --remote " + state.ShellWord(this)
		}
		ps = append(ps, state.Problem{Path: p, Message: "a version of it recorded on " + e.store.StateRef() + " was found private after it was recorded (by a sync that refused it, or a scan), and is not published now that the file is kept: nothing was pushed (" + way + "; or, to publish it, git config --add strata.keepPrivate " + state.ShellWord(p) + ")"})
	}
	if len(refused) > 0 && note {
		if err := e.withhold(refused, refusedMeans); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// NotPublished returns, by path, why strata sync would not publish those
// of paths it would withhold as the rules stand, git asked as a sync asks
// it (unpublishable): a file the in-process rules keep but git ignores
// through a source they do not read (git -c), for init, which names what
// sync publishes.
func (e *Engine) NotPublished(ctx context.Context, paths []string) (map[string]string, error) {
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	return e.unpublishable(ctx, set)
}

// unpublishable returns, by path, why each of paths is one the current
// rules would not keep: outside the work tree, kept by no rule, private by
// the in-process rules, or ignored or filtered by git as git itself
// answers, or, kept only by a .strata.yaml rule, not tracked by git as git
// itself answers, or tracked with its local changes ignored (skip-worktree,
// assume-unchanged) as git itself answers (unless the user's
// strata.keepPrivate names it).
func (e *Engine) unpublishable(ctx context.Context, paths map[string]bool) (map[string]string, error) {
	why := map[string]string{}
	var ask, askTracked []string // askTracked: kept only by a .strata.yaml rule, so only while git tracks it
	for _, p := range sortedKeys(paths) {
		if strings.HasPrefix(p, "~") || gitstore.ValidPath(p) != nil {
			why[p] = "outside the work tree"
		} else if _, ok := e.cfg.Classify(p); !ok { // a kept path is never private
			why[p] = "no rule keeps it"
			if private := e.cfg.Private(p); private != "" {
				why[p] = "private: " + private
			}
		} else if e.display == "" && !e.cfg.Named(p) {
			ask = append(ask, p)
			if e.cfg.OnlyUserRule(p) {
				askTracked = append(askTracked, p)
			}
		}
	}
	if len(ask) > 0 {
		// the git processes run side by side: a sync waits for one start
		// of git, not three in turn, before it pushes
		type answer struct {
			filtered map[string]string
			tracked  map[string]string
			err      error
		}
		attr, track := make(chan answer, 1), make(chan answer, 1)
		go func() {
			filtered, err := e.store.CheckFilter(ctx, ask)
			attr <- answer{filtered: filtered, err: err}
		}()
		go func() {
			tracked, err := e.store.CheckTracked(ctx, ask)
			track <- answer{tracked: tracked, err: err}
		}()
		ignored, err := e.store.CheckIgnore(ctx, ask)
		a, t := <-attr, <-track
		if err = cmp.Or(a.err, t.err, err); err != nil {
			return nil, err
		}
		for _, p := range askTracked {
			if _, ok := t.tracked[p]; !ok {
				why[p] = "private: " + config.WhyUntracked
			}
		}
		for p, flag := range t.tracked {
			if flag != "" {
				why[p] = "private: " + config.WhyHidden(flag)
			}
		}
		for p, driver := range a.filtered {
			why[p] = "private: " + config.WhyFiltered(driver)
		}
		for p := range ignored {
			why[p] = "private: ignored by git"
		}
	}
	return why, nil
}

// elsewhere names the other remotes when every one of versions of path is
// recorded by commits some remote's tracking ref reaches (none is
// unpublished everywhere, so `forget PATH` takes none out), and this
// remote, the one tracking follows; other is "" otherwise.
func (e *Engine) elsewhere(ctx context.Context, head, tracking, path string, versions []string) (other, this string, err error) {
	refs, err := e.store.TrackingRefs()
	if err != nil {
		return "", "", err
	}
	unpub, err := e.store.VersionsBeyond(ctx, head, slices.Sorted(maps.Keys(refs)), []string{path})
	if err != nil {
		return "", "", err
	}
	for _, v := range versions {
		if unpub[path][v] {
			return "", "", nil // no remote holds it: forget takes it out
		}
	}
	var names []string
	for ref, name := range refs {
		if ref != tracking {
			names = append(names, state.ShownPath(name))
		}
	}
	this = refs[tracking]
	if this == "" {
		// a remote never synced yet has no tracking ref, and gets
		// everything: forget --remote takes the versions out all the same
		this, _ = gitstore.RemoteOf(tracking)
	}
	if len(names) == 0 || this == "" {
		return "", "", nil
	}
	slices.Sort(names)
	return strings.Join(names, " or "), this, nil
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

// pastHeads is how many of the tracking ref's earlier heads Unpublishable
// takes for published by the remote.
const pastHeads = 10

// keepPrivate is config.Config's KeepPrivate: git config strata.keepPrivate
// names rel.
func (e *Engine) keepPrivate(rel string) bool {
	return slices.Contains(e.store.Settings().KeepPrivate, rel)
}

// StrayKeep is a strata.keepPrivate value that names no file of the work
// tree: Value as the user wrote it, Why what it names instead.
type StrayKeep struct {
	Value string `json:"value"`
	Why   string `json:"why"`
}

// StrayKeeps lists each strata.keepPrivate value that names no file of the
// work tree now, so keeps nothing: a pattern (config/*: a value is one path,
// taken literally), a folder, a path outside the work tree, or a name with
// no file (a typo, a file not made yet). sync and record never warn about
// one: doctor does (attack26 recheck F7).
func (e *Engine) StrayKeeps() []StrayKeep {
	var out []StrayKeep
	for _, v := range e.store.Settings().KeepValues {
		p, why := v.Path, ""
		switch {
		case filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../"):
			why = "it names no path inside the work tree"
		default:
			fi, err := os.Lstat(filepath.Join(e.cfg.Root, filepath.FromSlash(p)))
			switch {
			case err != nil && strings.ContainsAny(v.Value, "*?["):
				why = "no file has that name: a value is one path, taken literally, not a pattern (no globs)"
			case err != nil:
				why = "no file has that name in the work tree (a value is taken literally)"
			case fi.IsDir():
				why = "it names a folder: a value names one file, so the files in it are not kept"
			}
		}
		if why != "" {
			out = append(out, StrayKeep{Value: v.Value, Why: why})
		}
	}
	return out
}

// SyncHome reports whether `strata sync` also syncs the auto-memory file's
// home ref without --home: git config strata.syncHome. .strata.yaml's
// sync_home: true, which may come with the repository from anyone who can
// push (committed, or staged by a pull waiting for its merge commit), is
// not honoured (it would publish the user's own memory file): ignored is
// then true, so that the caller can say how to turn it on.
func (e *Engine) SyncHome() (on, ignored bool) {
	if v := e.store.Settings().SyncHome; v != nil {
		return *v, false
	}
	return false, e.cfg.SyncHome
}
