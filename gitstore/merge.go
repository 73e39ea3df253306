package gitstore

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/conflict"
	"github.com/strata-dev/strata/state"
)

// MergeKind says how two heads relate and what merging them does.
type MergeKind string

// The kinds of merge.
const (
	MergeUpToDate    MergeKind = "up-to-date"   // same commit, or the other side is behind: nothing to take
	MergeFastForward MergeKind = "fast-forward" // this side is behind: move to the other head
	MergeMerged      MergeKind = "merged"       // both moved: a merge commit with both parents
)

// ActionMerge is the action of the one log entry of a merge commit that
// changed no path (its decisions all kept the local versions).
const ActionMerge = state.ActionMerge

// MergePath is one path whose merged version differs from this side's, or
// that both sides changed (a decision by timestamp). Blob ids are "" when
// the path is absent.
type MergePath struct {
	Path   string `json:"path"`
	Base   string `json:"-"`
	Ours   string `json:"-"`
	Theirs string `json:"-"`
	Result string `json:"-"` // the merged version; a check may set it back to Ours

	// ByTime is set when both sides changed the path since the merge base:
	// by default the version recorded later wins (conflict.Later), and a
	// check may merge the two instead (see Merged, KeptBoth).
	ByTime   bool           `json:"by_time,omitempty"`
	OursAt   conflict.Stamp `json:"-"` // when each side recorded its version (ByTime only)
	TheirsAt conflict.Stamp `json:"-"`
	// TheirsHead is, when the remote side's changes since the merge base
	// include a version recorded as the one the recording machine's
	// checked-out commit held (a Strata-Head trailer: a version git put in
	// that work tree, or the one committed; a deletion git made) that
	// replaced this side's version (checkoutOver), that commit.
	TheirsHead string `json:"-"`
	// ReplacesEdit, set by the sync's check, says the merge takes the
	// remote's version of a path (TheirsHead set) over a local version
	// that is no version this machine's checked-out commit holds: a local
	// edit (or one that came from elsewhere), named as lost.
	ReplacesEdit bool      `json:"-"`
	Winner       string    `json:"winner,omitempty"` // commit that recorded the winning version
	WinnerTime   time.Time `json:"winner_time,omitzero"`
	Loser        string    `json:"loser,omitempty"` // commit that recorded the losing version
	LoserTime    time.Time `json:"loser_time,omitzero"`
	// WinnerNote and LoserNote say when the side's time was bounded
	// (conflict.Stamp.Note): its commit gave a later one.
	WinnerNote string `json:"winner_note,omitempty"`
	LoserNote  string `json:"loser_note,omitempty"`

	// KeptLocal, set by a merge check, says why the local version was kept
	// over the merged one (it failed its schema or a transition rule).
	KeptLocal string `json:"kept_local,omitempty"`
	// NotTaken, set with KeptLocal when this side holds no version at the
	// path on disk (none, or one a sync here did not take either), says the
	// merge keeps Result, the other side's version, in its tree — the
	// shared state, which a refusal by this machine's own rules (its
	// max_size, its schema, what Claude Code runs here) must not turn into
	// a deletion for the machines that take it — while this work tree is
	// not written (engine.NotTaken remembers it). The merge's message has
	// no kept local line for it: its tree kept nothing local.
	NotTaken bool `json:"not_taken,omitempty"`
	// Merged, set by a check, is content built from both versions; Result
	// is its blob id, and the merge writes the blob.
	Merged []byte `json:"-"`
	// Content, set by a check, is Result's content as the check read it,
	// so that the writer of the work tree need not read it again (nil: not
	// kept).
	Content []byte `json:"-"`
	// MergedBoth says Result holds both sides' edits (Merged, or one side's
	// version that already held the other's).
	MergedBoth bool `json:"merged,omitempty"`
	// Dropped, with MergedBoth, names each edit of either side the merge
	// could not keep (a graph entity one side deleted and the other edited,
	// a member both changed), with the commit that holds it.
	Dropped []string `json:"dropped,omitempty"`
	// DroppedOurs says whether one of Dropped was this side's edit.
	DroppedOurs bool `json:"-"`
	// KeptBoth, set by a check on a path both sides added (or by the plan,
	// from such a decision of a merge made elsewhere), is the path the
	// version recorded later moved to; the earlier one stays here.
	KeptBoth string `json:"kept_both,omitempty"`
	// MovedFrom is set on the path a KeptBoth version moved to.
	MovedFrom string `json:"moved_from,omitempty"`
	// Why says why a history rule overruled the time decision.
	Why string `json:"why,omitempty"`
	// Foreign says a home merge drops the path (Result ""): a home history
	// holds the auto-memory file only (dropForeign).
	Foreign bool `json:"foreign,omitempty"`
	// Class and Schema go to the merge commit's trailers; a check fills them.
	Class  state.Class `json:"class,omitempty"`
	Schema string      `json:"-"`
}

// Changed reports whether the merged version differs from this side's.
func (p MergePath) Changed() bool { return p.Result != p.Ours }

// Merge is the plan (and, once written, the outcome) of merging Theirs into
// Ours. Paths is sorted by path.
type Merge struct {
	Kind   MergeKind   `json:"kind"`
	Ours   string      `json:"local"`
	Theirs string      `json:"remote"`
	Base   string      `json:"base,omitempty"`
	Head   string      `json:"head"`   // the head after the merge (Ours when nothing changes)
	Ahead  int         `json:"ahead"`  // commits on Ours not on Theirs
	Behind int         `json:"behind"` // commits on Theirs not on Ours
	Paths  []MergePath `json:"paths"`
	// Lost lists the local versions that lost to the other side in merges
	// made elsewhere that this merge brings in (this merge's own decisions
	// are in Paths).
	Lost []Lost `json:"lost,omitempty"`
	// Foreign names the paths a home merge drops: a home history holds
	// the auto-memory file only (dropForeign).
	Foreign []string `json:"foreign,omitempty"`
}

// Lost is a local version that a merge did not take.
type Lost struct {
	Path   string `json:"path"`
	Rev    string `json:"rev"`              // the commit that holds it: strata restore PATH --rev REV
	Winner string `json:"winner,omitempty"` // the commit whose version was taken
	Merge  string `json:"merge,omitempty"`  // the merge commit that decided
	// Refused, set when the machine that made Merge refused this version
	// and kept its own ("kept local PATH: why" in its message), is that
	// machine's reason, as plain text of at most maxReason bytes.
	Refused string `json:"refused,omitempty"`
	// CheckedOut says the version taken is one the other machine's
	// checked-out commit held when it recorded it (a Strata-Head trailer):
	// a checkout, stash, reset or pull there, or a commit of the edit.
	CheckedOut bool `json:"checked_out,omitempty"`
}

// The flags of the merge-base walk.
const (
	flagOurs   = 1
	flagTheirs = 2
	flagStale  = 4
)

type walkItem struct {
	hash plumbing.Hash
	time int64
}

type walkQueue []walkItem

func (q walkQueue) Len() int { return len(q) }
func (q walkQueue) Less(i, j int) bool {
	if q[i].time != q[j].time {
		return q[i].time > q[j].time
	}
	return bytes.Compare(q[i].hash[:], q[j].hash[:]) > 0 // the order of their hex ids
}
func (q walkQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *walkQueue) Push(x any)   { *q = append(*q, x.(walkItem)) }
func (q *walkQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// backdated reports whether a fast-forward of ours to theirs would put on
// this ref's chain a commit dated more than conflict.ClockSkew before ours:
// a peer whose clock is behind, or a forged date. The chain is the one the
// time index follows (docs/format.md): from theirs down to ours, at each
// merge the first parent that leads to ours — a commit of another line
// merged in on the way (news holds every commit theirs reaches and ours
// does not) is never on it. The index answers `show --at T` and `restore
// --at T` with the newest commit of the chain dated by T, so such a commit
// would be taken as the head at a moment before this machine had it,
// hiding its own versions from then (a commit dated 1970: every version
// before the sync). A merge commit is written instead, dated now, with
// ours as its first parent: the chain keeps this machine's own commits at
// their times, and the peer's versions are on it from the sync on
// (attack35 M2). Clocks a few seconds apart, as machines' clocks are,
// fast-forward as before: a merge for each would keep machines syncing in
// turn from converging in one round. An unreadable ours is taken as not
// dated. Callers hold s.mu.
func (s *Store) backdated(ours, theirs plumbing.Hash, news []commitInfo) bool {
	oc, err := s.readCommit(ours)
	if err != nil {
		return false
	}
	floor := oc.time - int64(conflict.ClockSkew/time.Second)
	// the commits of news that lead to ours, found from ours up through
	// their children
	children := make(map[plumbing.Hash][]plumbing.Hash, len(news))
	byHash := make(map[plumbing.Hash]commitInfo, len(news))
	for _, n := range news {
		byHash[n.hash] = n
		for _, p := range n.parents {
			children[p] = append(children[p], n.hash)
		}
	}
	leads := map[plumbing.Hash]bool{ours: true}
	for todo := []plumbing.Hash{ours}; len(todo) > 0; {
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, c := range children[h] {
			if !leads[c] {
				leads[c] = true
				todo = append(todo, c)
			}
		}
	}
	for c := theirs; c != ours; {
		ci, ok := byHash[c]
		if !ok {
			return false
		}
		if ci.time < floor {
			return true
		}
		next := plumbing.ZeroHash
		for _, p := range ci.parents {
			if leads[p] {
				next = p
				break
			}
		}
		if next.IsZero() {
			return false
		}
		c = next
	}
	return false
}

// ancestry is what the merge-base walk learns about two heads.
type ancestry struct {
	bases      []plumbing.Hash
	oursOnly   []commitInfo // reachable from ours only
	theirsOnly []commitInfo // reachable from theirs only
}

// walk paints the histories of ours and theirs, newest first, as git's
// paint_down_to_common does, and returns their best common ancestors and the
// commits only one of them reaches. Commit times only order the walk: when
// clocks are skewed the walk goes deeper, and once no unpainted commit is
// left, the stale mark is still carried through every commit already seen,
// so no common commit is ever counted as one side's. Callers hold s.mu.
func (s *Store) walk(ours, theirs plumbing.Hash) (ancestry, error) {
	var a ancestry
	if ours == theirs {
		a.bases = []plumbing.Hash{ours}
		return a, nil
	}
	flags := map[plumbing.Hash]uint8{}
	infos := map[plumbing.Hash]commitInfo{}
	q := &walkQueue{}
	// queued counts each commit's entries in q, and nonStale the entries
	// whose commit is not stale, so that no step looks through the queue:
	// one commit with k parents queues k entries.
	queued := map[plumbing.Hash]int{}
	nonStale := 0
	mark := func(h plumbing.Hash, f uint8) {
		old := flags[h]
		flags[h] = old | f
		if old&flagStale == 0 && f&flagStale != 0 {
			nonStale -= queued[h]
		}
	}
	enqueue := func(h plumbing.Hash, time int64) {
		heap.Push(q, walkItem{hash: h, time: time})
		queued[h]++
		if flags[h]&flagStale == 0 {
			nonStale++
		}
	}
	push := func(h plumbing.Hash, f uint8) error {
		mark(h, f)
		ci, ok := infos[h]
		if !ok {
			var err error
			if ci, err = s.readCommit(h); err != nil {
				return walkDamaged(h, err)
			}
			infos[h] = ci
		}
		enqueue(h, ci.time)
		return nil
	}
	if err := push(ours, flagOurs); err != nil {
		return a, err
	}
	if err := push(theirs, flagTheirs); err != nil {
		return a, err
	}
	var candidates []plumbing.Hash
	isCandidate := map[plumbing.Hash]bool{}
	for q.Len() > 0 {
		live := nonStale > 0 // before the pop: the popped entry counts
		it := heap.Pop(q).(walkItem)
		s.walkSteps++
		queued[it.hash]--
		f := flags[it.hash]
		if f&flagStale == 0 {
			nonStale--
		}
		if !live {
			// Only stale commits are left: carry the mark through the
			// commits already seen, and read nothing new.
			for _, p := range infos[it.hash].parents {
				if pf, seen := flags[p]; seen && pf&flagStale == 0 {
					mark(p, flagStale|f)
					enqueue(p, infos[p].time)
				}
			}
			continue
		}
		if f&(flagOurs|flagTheirs) == flagOurs|flagTheirs && f&flagStale == 0 {
			if !isCandidate[it.hash] {
				isCandidate[it.hash] = true
				candidates = append(candidates, it.hash)
			}
			f |= flagStale
		}
		for _, p := range infos[it.hash].parents {
			if flags[p]&f == f {
				continue
			}
			if err := push(p, f); err != nil {
				return a, err
			}
		}
	}
	for _, c := range candidates {
		if flags[c]&flagStale == 0 {
			a.bases = append(a.bases, c)
		}
	}
	if len(a.bases) > 1 {
		var err error
		if a.bases, err = s.independent(a.bases); err != nil {
			return a, err
		}
	}
	for h, f := range flags {
		switch f {
		case flagOurs:
			a.oursOnly = append(a.oursOnly, infos[h])
		case flagTheirs:
			a.theirsOnly = append(a.theirsOnly, infos[h])
		}
	}
	return a, nil
}

// independent drops the bases that are ancestors of another base, and sorts
// the rest by id so every machine folds them in the same order. One walk
// down from the parents of every base finds them all: a base it meets is an
// ancestor of another. Callers hold s.mu.
func (s *Store) independent(bases []plumbing.Hash) ([]plumbing.Hash, error) {
	isBase := map[plumbing.Hash]bool{}
	for _, b := range bases {
		isBase[b] = true
	}
	seen := map[plumbing.Hash]bool{}
	var stack []plumbing.Hash
	parents := func(c plumbing.Hash) error { // stacks c's parents not seen yet
		ci, err := s.readCommit(c)
		if err != nil {
			return err
		}
		for _, p := range ci.parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
		return nil
	}
	for _, b := range bases {
		if err := parents(b); err != nil {
			return nil, err
		}
	}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := parents(c); err != nil {
			return nil, err
		}
	}
	var out []plumbing.Hash
	for _, b := range bases {
		if !seen[b] {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// flatten lists every file of a tree as path -> blob. Callers hold s.mu.
func (s *Store) flatten(tree plumbing.Hash) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	return out, s.walkFiles(tree, nil, func(p string, e treeEntry) { out[p] = e.Hash })
}

// commitFiles is flatten of commit c's tree; a tree past the bounds is a
// *TreeBoundError naming c in its role to the caller ("" for "commit").
func (s *Store) commitFiles(c plumbing.Hash, role string) (map[string]plumbing.Hash, error) {
	if c.IsZero() {
		return map[string]plumbing.Hash{}, nil
	}
	t, err := s.commitTree(c)
	if err != nil {
		return nil, err
	}
	files, err := s.flatten(t)
	if err != nil {
		return nil, inCommit(err, role, c)
	}
	return files, nil
}

// PlanMerge works out, without writing anything, how theirs merges into
// ours (both commit-ish; ours may be "" for a ref that does not exist yet).
// Per path, three-way from the merge base: a path changed on one side only
// takes that side's version whatever the clocks say; for a path both sides
// changed (to different versions) the plan carries the three versions and
// when each side recorded its own (the Strata-Time trailer of the recording
// commit, else its commit time, and the commit's id), and takes the one
// conflict.Later picks, so both machines reach the same tree. A time ahead
// of now, this machine's clock, counts as now or as the earliest time of
// the commits built on it (conflict.Bound, stamps), and the path says so
// (WinnerNote, LoserNote). A check
// (MergeInto) may replace that decision by class (conflict.Resolve). The
// plan is symmetric: swapping ours and theirs gives the same Result for
// every path. A history whose merge bases would take more than
// maxBaseMerges merges of merge bases to fold is refused with an error
// wrapping ErrTangled.
func (s *Store) PlanMerge(ours, theirs string, now time.Time) (*Merge, error) {
	var o, t plumbing.Hash
	var err error
	if ours != "" {
		if o, err = s.resolve(ours); err != nil {
			return nil, err
		}
	}
	if t, err = s.resolve(theirs); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.planMerge(o, t, now, 0, &baseMerges{})
}

// planMerge plans the merge of theirs into ours; depth counts the merges of
// merge bases it is nested in, and bm holds those its merge has run.
func (s *Store) planMerge(ours, theirs plumbing.Hash, now time.Time, depth int, bm *baseMerges) (*Merge, error) {
	m := &Merge{Ours: hashString(ours), Theirs: theirs.String(), Head: hashString(ours)}
	if ours.IsZero() {
		// Nothing local yet: everything comes from theirs.
		m.Kind, m.Head = MergeFastForward, theirs.String()
		files, err := s.commitFiles(theirs, "the other side's head")
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		for p, b := range files {
			m.Paths = append(m.Paths, MergePath{Path: p, Theirs: b.String(), Result: b.String()})
		}
		sortPaths(m.Paths)
		s.dropForeign(m, nil, files)
		return m, nil
	}
	anc, err := s.walk(ours, theirs)
	if err != nil {
		return nil, fmt.Errorf("merge base: %w", err)
	}
	m.Ahead, m.Behind = len(anc.oursOnly), len(anc.theirsOnly)
	if len(anc.bases) == 1 {
		m.Base = anc.bases[0].String()
	}
	switch {
	case len(anc.theirsOnly) == 0:
		m.Kind = MergeUpToDate // theirs is ours or one of its ancestors
		return m, nil
	case len(anc.oursOnly) == 0 && !s.backdated(ours, theirs, anc.theirsOnly):
		m.Kind, m.Head = MergeFastForward, theirs.String()
	default:
		m.Kind = MergeMerged
	}

	base, err := s.baseFiles(anc.bases, now, depth, bm)
	if err != nil {
		return nil, err
	}
	of, err := s.commitFiles(ours, "this side's head")
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	tf, err := s.commitFiles(theirs, "the other side's head")
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	var moved, keptBoth map[string]string
	m.Lost, moved, keptBoth = s.fromMerges(anc)
	var oursTimes, theirsTimes *versionTimes
	for _, p := range unionPaths(base, of, tf) {
		b, oh, th := base[p], of[p], tf[p]
		if oh == th {
			continue
		}
		mp := MergePath{Path: p, Base: hashString(b), Ours: hashString(oh), Theirs: hashString(th),
			MovedFrom: moved[p], KeptBoth: keptBoth[p]}
		switch {
		case oh == b:
			mp.Result = mp.Theirs
		case th == b:
			continue // changed here only: ours stands, nothing to report
		default:
			if oursTimes == nil {
				oursTimes = s.versionTimes(anc.oursOnly, ours, now)
				theirsTimes = s.versionTimes(anc.theirsOnly, theirs, now)
			}
			if b.IsZero() {
				// both sides made the path since the base (or there is none:
				// a clone's first sync): a side whose version is git's checkout
				// of one the other side recorded and moved on from made nothing.
				// When both did (each checked out the other's), neither
				// counts: by time, as on every machine whatever the order
				// of syncs (attack33b F5: the first to push won)
				oursStale, theirsStale := s.movedOn(oursTimes, theirsTimes, p, oh), s.movedOn(theirsTimes, oursTimes, p, th)
				switch {
				case oursStale && !theirsStale:
					mp.Result = mp.Theirs
					m.Paths = append(m.Paths, mp)
					continue
				case theirsStale && !oursStale:
					continue // as changed here only
				}
			}
			oursAt, err := oursTimes.of(s, p, oh)
			if err != nil {
				return nil, err
			}
			theirsAt, err := theirsTimes.of(s, p, th)
			if err != nil {
				return nil, err
			}
			mp.ByTime, mp.OursAt, mp.TheirsAt = true, oursAt, theirsAt
			mp.Decide(conflict.Later(mp.OursAt, mp.TheirsAt))
		}
		m.Paths = append(m.Paths, mp)
	}
	s.markAtHead(m.Paths, anc.theirsOnly, theirs, now, &theirsTimes)
	if refused := s.refusedElsewhere(anc, of, m.Paths); len(refused) > 0 {
		m.Lost = append(m.Lost, refused...)
		sort.SliceStable(m.Lost, func(i, j int) bool { return m.Lost[i].Path < m.Lost[j].Path })
	}
	s.dropForeign(m, of, tf)
	return m, nil
}

// dropForeign keeps a home store's merge from taking any path but HomeFile
// (foreign): such a path of theirs is left out of the merged tree, one
// ours holds (taken by a strata before this one) is deleted by it, and
// neither is named as lost. A fast-forward to a head holding one becomes
// a merge, so that the merged head, pushed, is a fast-forward for the
// remote and for every machine syncing after it: the path is gone from the
// shared history's head too. m.Foreign names the paths dropped. ours and
// theirs are the two heads' files; ours nil: no history here, and the
// merge is a commit on theirs whose delete blocks name them. Nothing for a
// store that is not a home store.
func (s *Store) dropForeign(m *Merge, ours, theirs map[string]plumbing.Hash) {
	if s.prefix != "home/" {
		return
	}
	planned := map[string]bool{}
	kept := m.Paths[:0]
	for _, p := range m.Paths {
		planned[p.Path] = true
		switch {
		case !s.foreign(p.Path):
			kept = append(kept, p)
		case ours == nil: // a commit on theirs: it deletes the path
			kept = append(kept, MergePath{Path: p.Path, Theirs: p.Theirs, Foreign: true})
		case p.Ours != "": // held here: the merge deletes it
			kept = append(kept, MergePath{Path: p.Path, Base: p.Base, Ours: p.Ours, Theirs: p.Theirs, Foreign: true})
		}
	}
	m.Paths = kept
	named := map[string]bool{} // m.Foreign's paths (attack36c L1: a list looked through took minutes for 90 000)
	for _, files := range []map[string]plumbing.Hash{ours, theirs} {
		for p := range files {
			if !s.foreign(p) || named[p] {
				continue
			}
			named[p] = true
			m.Foreign = append(m.Foreign, p)
			if oh := ours[p]; !planned[p] && !oh.IsZero() {
				// the same version on both sides, which the plan passes over
				m.Paths = append(m.Paths, MergePath{Path: p, Ours: oh.String(), Theirs: hashString(theirs[p]), Foreign: true})
			}
		}
	}
	if len(m.Foreign) == 0 {
		return
	}
	sort.Strings(m.Foreign)
	sortPaths(m.Paths)
	m.Lost = slices.DeleteFunc(m.Lost, func(l Lost) bool { return s.foreign(l.Path) })
	if m.Kind == MergeFastForward {
		m.Kind, m.Head = MergeMerged, m.Ours
	}
}

// refusedElsewhere names the local versions that a merge made elsewhere
// refused and that this merge replaces. A machine whose rules refuse the
// version it is offered (its schema, its max_size, a history rule) keeps its
// own and says so in its merge commit, "kept local PATH: why" (a commit
// with one parent when it had no history of its own); the version it was
// offered is its last parent's. When that version is the one this side
// holds at PATH and this merge replaces it, this side lost it, as surely as
// to a decision by timestamp: it is named, with that parent as the commit
// that brings it back. The message may have been written by anyone who can
// push, so it is only a hint: the path must pass state.CheckPath, this side
// must hold the offered version there, the merge commit's tree must not, and
// this merge must change the path; the reason is kept as plain text only.
// Callers hold s.mu.
func (s *Store) refusedElsewhere(anc ancestry, ours map[string]plumbing.Hash, paths []MergePath) []Lost {
	changed := map[string]bool{}
	for _, p := range paths {
		if p.Changed() {
			changed[p.Path] = true
		}
	}
	byPath := map[string]Lost{}
	for _, ci := range anc.theirsOnly {
		if len(ci.parents) == 0 || !strings.Contains(ci.message, "\n"+keptPrefix) {
			continue
		}
		offered := ci.parents[len(ci.parents)-1]
		for _, d := range decisionsOf(ci.message) {
			mine, held := ours[d.Path]
			if d.Kept == "" || !held || !changed[d.Path] || state.CheckPath(d.Path) != nil {
				continue
			}
			if !s.holds(offered, d.Path, mine) || s.holds(ci.hash, d.Path, mine) {
				continue
			}
			l := Lost{Path: d.Path, Rev: offered.String(), Winner: ci.hash.String(), Merge: ci.hash.String(),
				Refused: plainText(d.Kept, maxReason)}
			if old, dup := byPath[l.Path]; !dup || l.Merge < old.Merge { // one notice a path, the same on every run
				byPath[l.Path] = l
			}
		}
	}
	out := make([]Lost, 0, len(byPath))
	for _, l := range byPath {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// holds reports whether commit's tree has blob at path; a commit or tree
// that cannot be read holds nothing. Callers hold s.mu.
func (s *Store) holds(commit plumbing.Hash, path string, blob plumbing.Hash) bool {
	ci, err := s.readCommit(commit)
	if err != nil {
		return false
	}
	e, err := s.lookup(ci.tree, path)
	return err == nil && !e.IsDir() && e.Hash == blob
}

// maxReason bounds the reason a merge made elsewhere gives for a refusal,
// and the reason of a "kept local" line a merge made here writes.
const maxReason = 300

// plainText keeps text from another machine's commit printable: a rune
// that is not (a control or format character, an invalid byte) becomes
// '?', and the text is cut at max bytes.
func plainText(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			r = '?'
		}
		if b.Len()+utf8.RuneLen(r) > max {
			b.WriteString("...")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Decide takes theirs (true) or ours (false) for a path both sides changed,
// and names the winning and the losing commit.
func (p *MergePath) Decide(theirs bool) {
	w, l := p.OursAt, p.TheirsAt
	p.Result = p.Ours
	if theirs {
		w, l = l, w
		p.Result = p.Theirs
	}
	p.Winner, p.WinnerTime, p.Loser, p.LoserTime = w.Commit, w.Time, l.Commit, l.Time
	p.WinnerNote, p.LoserNote = w.Note(), l.Note()
}

// fromMerges reads the decisions of the merge commits only theirs reaches:
// those whose losing version was recorded on this side, and the paths of
// kept-both decisions (new path -> original path, and back), so that taking
// them checks a move as a move.
func (s *Store) fromMerges(anc ancestry) ([]Lost, map[string]string, map[string]string) {
	var out []Lost
	moved, keptBoth := map[string]string{}, map[string]string{}
	var theirs map[string]bool
	for _, ci := range anc.theirsOnly {
		if len(ci.parents) < 2 {
			continue
		}
		if theirs == nil {
			theirs = map[string]bool{}
			for _, c := range anc.theirsOnly {
				theirs[c.hash.String()] = true
			}
		}
		for _, d := range decisionsOf(ci.message) {
			// The message may have been written by anyone who can push: a
			// line names a path only if it is one strata could record.
			if state.CheckPath(d.Path) != nil {
				continue
			}
			if d.KeptBoth != "" && state.CheckPath(d.KeptBoth) == nil {
				moved[d.KeptBoth], keptBoth[d.Path] = d.Path, d.KeptBoth
			}
			if d.Loser != "" && !theirs[d.Loser] && s.lostThere(d.Loser, d.Path) {
				winner := d.Winner
				if !plumbing.IsHash(winner) {
					winner = ci.hash.String() // the merge that decided, rather than a forged name
				}
				out = append(out, Lost{Path: d.Path, Rev: d.Loser, Winner: winner, Merge: ci.hash.String()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Merge < out[j].Merge
	})
	return out, moved, keptBoth
}

// lostThere reports whether rev, a "decided" line's loser, is a full commit
// id whose tree holds a file at path: a version that can be restored with
// `strata restore PATH --rev REV`. A forged line naming anything else is
// not a loss. Callers hold s.mu.
func (s *Store) lostThere(rev, path string) bool {
	if !plumbing.IsHash(rev) {
		return false
	}
	ci, err := s.readCommit(plumbing.NewHash(rev))
	if err != nil {
		return false
	}
	e, err := s.lookup(ci.tree, path)
	return err == nil && notAFile(e) == nil
}

// maxBaseMerges bounds the merges of merge bases one merge runs. Histories
// written by strata, one merge commit of two heads at a time, need a few;
// a history a remote wrote with many merge bases at many levels (a ladder
// of octopus merges) would need millions.
const maxBaseMerges = 100

// ErrTangled is returned by a merge whose merge bases would take more than
// maxBaseMerges merges of merge bases to fold.
var ErrTangled = errors.New("history too tangled to merge")

// baseMerges holds the merges of merge bases one merge has run, by their
// two bases and depth, so that a pair of bases that several merges of merge
// bases above it find is merged once.
type baseMerges struct {
	done map[baseMergeKey][]MergePath
	ran  int
}

type baseMergeKey struct {
	a, b  plumbing.Hash
	depth int
}

// baseFiles returns the snapshot the merge compares against: the merge
// base's, none when the histories share nothing, or for several bases (a
// criss-cross) their own merge, folded in id order, as git's recursive
// strategy does. It returns an error wrapping ErrTangled when that takes
// more than maxBaseMerges merges. Callers hold s.mu.
func (s *Store) baseFiles(bases []plumbing.Hash, now time.Time, depth int, bm *baseMerges) (map[string]plumbing.Hash, error) {
	switch {
	case len(bases) == 0:
		return map[string]plumbing.Hash{}, nil
	case len(bases) == 1 || depth > 8:
		return s.commitFiles(bases[0], "the merge base")
	}
	acc, err := s.commitFiles(bases[0], "the merge base")
	if err != nil {
		return nil, err
	}
	for _, b := range bases[1:] {
		key := baseMergeKey{bases[0], b, depth + 1}
		paths, done := bm.done[key]
		if !done {
			if bm.ran >= maxBaseMerges {
				return nil, fmt.Errorf("merge bases: %w: more than %d merges of merge bases", ErrTangled, maxBaseMerges)
			}
			bm.ran++
			s.subMerges++
			sub, err := s.planMerge(bases[0], b, now, depth+1, bm)
			if err != nil {
				return nil, err
			}
			if bm.done == nil {
				bm.done = map[baseMergeKey][]MergePath{}
			}
			paths = sub.Paths
			bm.done[key] = paths
		}
		for _, p := range paths {
			if p.Result == "" {
				delete(acc, p.Path)
			} else {
				acc[p.Path] = plumbing.NewHash(p.Result)
			}
		}
	}
	return acc, nil
}

// versionTimes finds, for one side, the commit that recorded a path's
// current version: the newest of the side's own non-merge commits whose
// trailers name the path and whose snapshot holds that version, by their
// bounded times (stamps). Merge commits are skipped: they only carry a
// version recorded elsewhere, at a time that says nothing about the edit.
type versionTimes struct {
	tip     commitInfo
	tipAt   conflict.Stamp
	byPath  map[string][]stamped // newest first
	anyHead bool                 // some version has a Strata-Head trailer
}

type stamped struct {
	commitInfo
	at     conflict.Stamp // stamps
	atHead string         // the path's Strata-Head commit, if any
}

func (s *Store) versionTimes(side []commitInfo, tip plumbing.Hash, now time.Time) *versionTimes {
	vt := &versionTimes{byPath: map[string][]stamped{}}
	vt.tip, _ = s.readCommit(tip)
	vt.tip.hash = tip
	st := stamps(side, now)
	var ok bool
	if vt.tipAt, ok = st[tip]; !ok {
		vt.tipAt = conflict.Bound(tip.String(), stampTime(vt.tip), now, now, "")
	}
	for _, ci := range side {
		if len(ci.parents) > 1 {
			continue
		}
		at := st[ci.hash]
		for _, e := range parseTrailers(ci.message) {
			vt.byPath[e.Path] = append(vt.byPath[e.Path], stamped{ci, at, e.AtHead})
			vt.anyHead = vt.anyHead || e.AtHead != ""
		}
	}
	for _, list := range vt.byPath {
		sort.Slice(list, func(i, j int) bool {
			if !list[i].at.Time.Equal(list[j].at.Time) {
				return list[i].at.Time.After(list[j].at.Time)
			}
			return list[i].hash.String() > list[j].hash.String()
		})
	}
	return vt
}

// stamps returns the time of each commit of one side of a merge as a
// decision takes it: its writer's time (stampTime), which, when it is ahead
// of now, conflict.Bound lowers to now or to the earliest writer's time of
// the side's commits built on it, directly or not. A commit and those built
// on it are on one side together, so both machines of a merge bound a time
// alike, but for their clocks.
func stamps(side []commitInfo, now time.Time) map[plumbing.Hash]conflict.Stamp {
	idx := make(map[plumbing.Hash]int, len(side))
	for i, ci := range side {
		idx[ci.hash] = i
	}
	type limit struct {
		t  time.Time
		by string // the commit that gives t; "" for now
	}
	// before orders limits by time, then now first, then by commit id, so
	// that the commit a note names is the same on every machine
	before := func(a, b limit) bool {
		if !a.t.Equal(b.t) {
			return a.t.Before(b.t)
		}
		return b.by != "" && (a.by == "" || a.by < b.by)
	}
	raw := make([]time.Time, len(side))
	lim := make([]limit, len(side))
	children := make([]int, len(side)) // those not yet stamped
	for i, ci := range side {
		raw[i], lim[i] = stampTime(ci), limit{t: now}
		for _, p := range ci.parents {
			if j, ok := idx[p]; ok {
				children[j]++
			}
		}
	}
	var ready []int
	for i := range side {
		if children[i] == 0 {
			ready = append(ready, i)
		}
	}
	out := make(map[plumbing.Hash]conflict.Stamp, len(side))
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		ci := side[i]
		out[ci.hash] = conflict.Bound(ci.hash.String(), raw[i], now, lim[i].t, lim[i].by)
		l := lim[i] // what bounds the commits ci is built on
		if own := (limit{raw[i], ci.hash.String()}); before(own, l) {
			l = own
		}
		for _, p := range ci.parents {
			j, ok := idx[p]
			if !ok {
				continue
			}
			if before(l, lim[j]) {
				lim[j] = l
			}
			if children[j]--; children[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	return out
}

// markAtHead sets TheirsHead on each path the remote changed whose
// remote-only history holds a version recorded with a Strata-Head trailer
// that replaced the local version (checkoutOver). The commits' trailers
// are parsed once (already, when a path was decided by time), and only when
// a message has such a line; no tree is looked up otherwise.
func (s *Store) markAtHead(paths []MergePath, side []commitInfo, tip plumbing.Hash, now time.Time, vt **versionTimes) {
	if len(paths) == 0 {
		return
	}
	if *vt == nil {
		// most histories have no such line: a look at each message,
		// and no trailer parsed
		marked := false
		for _, ci := range side {
			if strings.Contains(ci.message, "\n"+trailerHead+": ") {
				marked = true
				break
			}
		}
		if !marked {
			return
		}
		*vt = s.versionTimes(side, tip, now)
	}
	if !(*vt).anyHead {
		return
	}
	for i := range paths {
		p := &paths[i]
		if p.Theirs == p.Base {
			continue
		}
		p.TheirsHead = s.checkoutOver(side, *vt, *p)
	}
}

// checkoutOver returns the Strata-Head commit of the newest version of
// p's path the side recorded with one that replaced this side's version
// p.Ours, or "":
//   - a record after which the side took p.Ours again (a sync's merge
//     there) and moved on from it does not count: what replaces the local
//     version was built on it, not on the checkout (attack33 M2: a clone's
//     first sync, then its agent's next step, named the first machine's
//     version lost after a checkout);
//   - when the side's history holds p.Ours (it is the merge base's, or a
//     commit of the side's holds it: a version this machine took from
//     elsewhere, or one the other machine took from here), only a record
//     made over p.Ours counts, its parent holding it: a checkout that
//     replaced some other version (a clone's first record, with no parent)
//     did not replace this one, and the side's own steps that moved on
//     from p.Ours are no loss (attack33c C5: a clone that edited nothing
//     was told its version, the first machine's older step, was lost after
//     a third machine's checkout; C4: a version named lost twice).
//
// A local version the side never held (an edit here) is replaced by the
// side's newest checkout, as its changes since the merge base include it.
func (s *Store) checkoutOver(side []commitInfo, vt *versionTimes, p MergePath) string {
	if head := vt.atHead(p.Path); p.Ours == "" || head == "" {
		return head
	}
	ours := plumbing.NewHash(p.Ours)
	// the side's commits that hold ours at the path, looked up once for
	// known and for every record heldAfter is asked of
	held := map[plumbing.Hash]bool{}
	for _, ci := range side {
		if e, err := s.lookup(ci.tree, p.Path); err == nil && !e.IsDir() && e.Hash == ours {
			held[ci.hash] = true
		}
	}
	known := p.Ours == p.Base || len(held) > 0
	for _, ci := range vt.byPath[p.Path] {
		if ci.atHead == "" || heldAfter(side, ci.hash, held) {
			continue
		}
		// the parent: one of the side's, answered by held, else read
		if known && (len(ci.parents) == 0 || !held[ci.parents[0]] && !s.holds(ci.parents[0], p.Path, ours)) {
			continue
		}
		return ci.atHead
	}
	return ""
}

// heldAfter reports whether a commit of side built on by (by itself
// excluded) is one of held, those that hold this machine's version.
func heldAfter(side []commitInfo, by plumbing.Hash, held map[plumbing.Hash]bool) bool {
	if len(held) == 0 {
		return false
	}
	parents := make(map[plumbing.Hash][]plumbing.Hash, len(side))
	for _, ci := range side {
		parents[ci.hash] = ci.parents
	}
	seen := map[plumbing.Hash]bool{} // whether a commit is built on by
	var on func(h plumbing.Hash) bool
	on = func(h plumbing.Hash) bool {
		if v, ok := seen[h]; ok {
			return v
		}
		seen[h] = false // no cycles in a history; guards a damaged one
		for _, p := range parents[h] {
			if p == by || (parents[p] != nil && on(p)) {
				seen[h] = true
				return true
			}
		}
		return false
	}
	for _, ci := range side {
		if ci.hash != by && held[ci.hash] && on(ci.hash) {
			return true
		}
	}
	return false
}

// atHead returns the Strata-Head commit of the newest version of path
// the side recorded with one (not in a merge): a version git put in that
// work tree, or a deletion git made there, since the merge base. It need
// not be the side's last version: an edit made on top of a stash there is
// built on what the stash put back, and what it lacks of this side's work
// it lacks because of the stash.
func (vt *versionTimes) atHead(path string) string {
	for _, ci := range vt.byPath[path] {
		if ci.atHead != "" {
			return ci.atHead
		}
	}
	return ""
}

// movedOn reports whether blob, one side's version of path, is a version
// git checked out there (the side's newest record of the path carries
// Strata-Head and holds blob) that the other side recorded before and then
// replaced: the path was absent from the merge base, or there is no base
// (attack33 M2: a clone that records what git checked out — its first
// sync, or strata init — is no newer work than the remote's history that
// moved on from that very version; by time, the clone's record, made
// later, took the committed version back over the first machine's agent).
func (s *Store) movedOn(side, other *versionTimes, path string, blob plumbing.Hash) bool {
	list := side.byPath[path]
	if blob.IsZero() || len(list) == 0 || list[0].atHead == "" {
		return false
	}
	if e, err := s.lookup(list[0].tree, path); err != nil || e.IsDir() || e.Hash != blob {
		return false
	}
	for _, ci := range other.byPath[path] {
		if e, err := s.lookup(ci.tree, path); err == nil && !e.IsDir() && e.Hash == blob {
			return true
		}
	}
	return false
}

func (vt *versionTimes) of(s *Store, path string, blob plumbing.Hash) (conflict.Stamp, error) {
	list := vt.byPath[path]
	for _, ci := range list {
		e, err := s.lookup(ci.tree, path)
		switch {
		case errors.Is(err, state.ErrNotFound) && blob.IsZero():
			return ci.at, nil
		case err != nil && !errors.Is(err, state.ErrNotFound):
			return conflict.Stamp{}, err
		case err == nil && !e.IsDir() && e.Hash == blob:
			return ci.at, nil
		}
	}
	if len(list) > 0 {
		return list[0].at, nil
	}
	return vt.tipAt, nil
}

// MergeInto merges theirs into ref by compare-and-swap under the ref's lock
// and returns what it did. check, when set, sees each plan before it is
// written and may keep the local version of a path (setting Result back to
// Ours and KeptLocal) and fill in Class and Schema for the trailers; it runs
// again if another writer moved the ref meanwhile. A fast-forward moves the
// ref to theirs unless check kept a local version; then, as in every other
// case where both sides moved, a merge commit is written with the ref's head
// as first parent and theirs as second, committed at when, with one trailer
// block (source sync) per path whose version changed and the timestamp
// decisions in its message. Nothing to take leaves the ref as it is. A
// history PlanMerge refuses (ErrTangled) leaves it as it is too.
func (s *Store) MergeInto(ref, theirs, title string, when time.Time, check func(*Merge) error) (*Merge, error) {
	t, err := s.resolve(theirs)
	if err != nil {
		return nil, err
	}
	var plan *Merge
	_, err = s.updateRef(ref, func(parent plumbing.Hash) (plumbing.Hash, error) {
		s.mu.Lock()
		p, err := s.planMerge(parent, t, when, 0, &baseMerges{})
		s.mu.Unlock()
		plan = p
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if check != nil {
			if err := check(plan); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		if plan.Kind == MergeUpToDate {
			return plumbing.ZeroHash, state.ErrUnchanged
		}
		kept := false
		for _, p := range plan.Paths {
			kept = kept || p.KeptLocal != "" && !p.NotTaken
		}
		if plan.Kind == MergeFastForward && !kept {
			return t, nil
		}
		plan.Kind = MergeMerged
		s.mu.Lock()
		defer s.mu.Unlock()
		h, err := s.writeMerge(parent, t, plan, title, when)
		if err == nil {
			plan.Head = h.String()
		}
		return h, err
	})
	if errors.Is(err, state.ErrUnchanged) {
		return plan, nil
	}
	if err != nil {
		return nil, err
	}
	return plan, nil
}

// writeMerge writes the merge commit of plan. Callers hold s.mu.
//
// With no history here (ours zero) the commit has theirs as its only
// parent, and like every commit its trailer blocks name what it changes
// from that parent: a delete block for each version of theirs it kept local
// (dropped). An older strata wrote add blocks for every file instead, with
// the drops named only on kept local lines, so that log, blame and restore
// never saw them (attack24 recheck H1); historyCheck still reads that form.
func (s *Store) writeMerge(ours, theirs plumbing.Hash, plan *Merge, title string, when time.Time) (plumbing.Hash, error) {
	from := ours
	if ours.IsZero() {
		from = theirs
	}
	root, err := s.commitTree(from)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var ps []pending
	for _, p := range plan.Paths {
		was := p.Ours // the version at path in from's tree
		if ours.IsZero() {
			was = p.Theirs
		}
		if p.Result == was {
			continue
		}
		if p.Merged != nil {
			if err := s.storeObject(plumbing.BlobObject, p.Merged, plumbing.NewHash(p.Result)); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("merge %s: %w", state.ShownPath(p.Path), err)
			}
		}
		pd := pending{ch: state.Change{Path: p.Path, Class: p.Class, Schema: p.Schema, Source: state.SourceSync}}
		switch {
		case p.Result == "":
			pd.action, pd.ch.Deleted = state.ActionDelete, true
		case was == "":
			pd.action, pd.blob = state.ActionAdd, plumbing.NewHash(p.Result)
		default:
			pd.action, pd.blob = state.ActionUpdate, plumbing.NewHash(p.Result)
		}
		ps = append(ps, pd)
	}
	newRoot, err := s.applyChanges(root, ps)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge: %w", err)
	}
	var b strings.Builder
	b.WriteString(title + "\n\n")
	if lines := decisionLines(plan.Paths); len(lines) > 0 {
		b.WriteString(strings.Join(lines, "\n") + "\n\n")
	}
	writeTrailers(&b, ps)
	writeTime(&b, when)
	when = when.Truncate(time.Second)
	var c strings.Builder
	c.WriteString("tree " + newRoot.String() + "\n")
	if !ours.IsZero() {
		c.WriteString("parent " + ours.String() + "\n")
	}
	c.WriteString("parent " + theirs.String() + "\n")
	sig := fmt.Sprintf("%s %d %s\n", identity, when.Unix(), when.Format("-0700"))
	c.WriteString("author " + sig + "committer " + sig + "\n" + b.String())
	h, err := s.writeObject(plumbing.CommitObject, []byte(c.String()))
	if err != nil {
		return h, err
	}
	s.commits[h] = newRoot
	return h, nil
}

// The message lines of a merge commit that Decisions reads back.
const (
	decidedPrefix  = "decided "
	keptPrefix     = "kept local "
	mergedPrefix   = "merged "
	keptBothPrefix = "kept both "
)

// maxDecisionLines is how many paths a merge commit's message lists with
// their decision: a remote may send 100 000 files that each fail their
// schema (maxRemoteFiles), and the message is pushed and printed by every
// machine's log. The paths decided by timestamp, merged or kept both come
// first (they name the version a restore brings back), then those kept
// local; past the bound one line says how many more there were.
const maxDecisionLines = 100

// decisionLines is the message lines of a merge's decisions, at most
// maxDecisionLines of them and then the count of the rest.
func decisionLines(paths []MergePath) []string {
	var first, kept []string
	total := 0
	for _, p := range paths {
		line := decisionLine(p)
		switch {
		case line == "" || p.NotTaken:
			continue
		case p.KeptLocal != "":
			if len(kept) < maxDecisionLines {
				kept = append(kept, line)
			}
		case len(first) < maxDecisionLines:
			first = append(first, line)
		}
		total++
	}
	lines := append(first, kept...)
	lines = lines[:min(len(lines), maxDecisionLines)]
	if more := total - len(lines); more > 0 {
		lines = append(lines, fmt.Sprintf("and %d more paths decided or kept local, not listed", more))
	}
	return lines
}

// MergedExcept opens the report of a merge that could not keep every edit.
const MergedExcept = "both sides' edits kept except: "

// decisionLine is the message line of a path decided by timestamp, or kept
// local by a check:
//
//	decided PATH: WINNER (TIME) over LOSER (TIME)
//	  WINNER: its time T is ahead of this machine's clock; taken as now
//	kept local PATH: REASON
//	merged PATH: both sides' edits kept
//	merged PATH: both sides' edits kept except: WHAT (COMMIT); WHAT (COMMIT)
//	kept both PATH: later version moved to NEWPATH
func decisionLine(p MergePath) string {
	switch {
	case p.KeptLocal != "":
		return keptPrefix + quotePath(p.Path) + ": " + plainText(p.KeptLocal, maxReason)
	case p.KeptBoth != "" && p.ByTime:
		return keptBothPrefix + quotePath(p.Path) + ": later version moved to " + quotePath(p.KeptBoth)
	case p.MergedBoth && len(p.Dropped) > 0:
		return mergedPrefix + quotePath(p.Path) + ": " + MergedExcept + oneLine(strings.Join(p.Dropped, "; "))
	case p.MergedBoth:
		return mergedPrefix + quotePath(p.Path) + ": both sides' edits kept"
	case p.ByTime:
		line := fmt.Sprintf("%s%s: %s (%s) over %s (%s)", decidedPrefix, quotePath(p.Path),
			p.Winner, p.WinnerTime.UTC().Format(time.RFC3339Nano), p.Loser, p.LoserTime.UTC().Format(time.RFC3339Nano))
		// a bounded time (conflict.Bound) is said on a line of its own
		// below, which readers of decided lines (older strata versions
		// too) pass over
		for _, n := range [][2]string{{p.Winner, p.WinnerNote}, {p.Loser, p.LoserNote}} {
			if n[1] != "" {
				line += "\n  " + state.ShortID(n[0]) + ": " + n[1]
			}
		}
		return line
	}
	return ""
}

// Decision is one path of a merge commit decided by timestamp or kept local,
// as read back from the commit's message.
type Decision struct {
	Path     string `json:"path"`
	Winner   string `json:"winner,omitempty"`
	Loser    string `json:"loser,omitempty"` // `strata restore PATH --rev LOSER` brings it back
	Kept     string `json:"kept_local,omitempty"`
	Merged   bool   `json:"merged,omitempty"`
	Dropped  string `json:"dropped,omitempty"` // Merged: the edits it could not keep, "; "-separated
	KeptBoth string `json:"kept_both,omitempty"`
	// MovedFrom is set on the path a KeptBoth version moved to.
	MovedFrom string `json:"moved_from,omitempty"` // where the later version went
}

// Decisions reads the decisions a merge commit's message lists. A commit
// of one parent has only its kept local lines (a sync's with no history of
// its own: each names why the file its delete block drops was not taken);
// other commits have none. A decided line's winner and loser are commit
// ids: a line whose loser is not one is passed over, and a winner that is
// not one is the merge commit's own id.
func (s *Store) Decisions(commit string) ([]Decision, error) {
	c, err := s.resolve(commit)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	ci, err := s.readCommit(c)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	switch len(ci.parents) {
	case 0:
		return nil, nil
	case 1:
		var kept []Decision
		for _, d := range decisionsOf(ci.message) {
			if d.Kept != "" {
				kept = append(kept, d)
			}
		}
		return kept, nil
	}
	ds := decisionsOf(ci.message)
	for i := range ds {
		if ds[i].Loser != "" && ds[i].Winner == "" {
			ds[i].Winner = c.String() // the merge that decided, rather than a forged name
		}
	}
	return ds, nil
}

// decisionsOf reads the decision lines of a merge commit's message. A
// decided line's loser is a commit id (else the line is passed over), and
// its winner one or "".
func decisionsOf(msg string) []Decision {
	var out []Decision
	for _, line := range strings.Split(msg, "\n") {
		switch {
		case strings.HasPrefix(line, decidedPrefix):
			rest := strings.TrimPrefix(line, decidedPrefix)
			i := strings.LastIndex(rest, ": ")
			if i < 0 {
				continue
			}
			// anyone who can push writes the message: a loser that is not
			// a commit id is no decision, and a winner that is not one is
			// left out (Decisions names the merge instead), so no text of
			// theirs passes for an id (attack36b F4: escapes reached the
			// terminal through the timeline)
			f := strings.Fields(rest[i+2:])
			if len(f) == 5 && f[2] == "over" && plumbing.IsHash(f[3]) {
				d := Decision{Path: unquotePath(rest[:i]), Loser: f[3]}
				if plumbing.IsHash(f[0]) {
					d.Winner = f[0]
				}
				out = append(out, d)
			}
		case strings.HasPrefix(line, keptPrefix):
			rest := strings.TrimPrefix(line, keptPrefix)
			path, why, ok := cutPath(rest)
			if ok {
				out = append(out, Decision{Path: path, Kept: why})
			}
		case strings.HasPrefix(line, mergedPrefix):
			if path, rest, ok := cutPath(strings.TrimPrefix(line, mergedPrefix)); ok {
				dropped, _ := strings.CutPrefix(rest, MergedExcept)
				if dropped == rest {
					dropped = ""
				}
				out = append(out, Decision{Path: path, Merged: true, Dropped: dropped})
			}
		case strings.HasPrefix(line, keptBothPrefix):
			path, rest, ok := cutPath(strings.TrimPrefix(line, keptBothPrefix))
			if to, found := strings.CutPrefix(rest, "later version moved to "); ok && found {
				out = append(out, Decision{Path: path, KeptBoth: unquotePath(to)})
			}
		}
	}
	return out
}

// cutPath splits "PATH: TEXT" where PATH may be quoted.
func cutPath(s string) (string, string, bool) {
	if strings.HasPrefix(s, `"`) {
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == '"' {
				return unquotePath(s[:i+1]), strings.TrimPrefix(s[i+1:], ": "), true
			}
		}
		return "", "", false
	}
	p, rest, ok := strings.Cut(s, ": ")
	return p, rest, ok
}

// Compare counts the commits only a reaches (ahead) and only b reaches
// (behind). An empty a or b counts as a ref with no commits.
func (s *Store) Compare(a, b string) (ahead, behind int, err error) {
	var ha, hb plumbing.Hash
	if a != "" {
		if ha, err = s.resolve(a); err != nil {
			return 0, 0, err
		}
	}
	if b != "" {
		if hb, err = s.resolve(b); err != nil {
			return 0, 0, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ha.IsZero() && hb.IsZero():
		return 0, 0, nil
	case ha.IsZero():
		n, err := s.count(hb)
		return 0, n, err
	case hb.IsZero():
		n, err := s.count(ha)
		return n, 0, err
	}
	anc, err := s.walk(ha, hb)
	if err != nil {
		return 0, 0, err
	}
	return len(anc.oursOnly), len(anc.theirsOnly), nil
}

// count counts the commits reachable from h. Callers hold s.mu.
func (s *Store) count(h plumbing.Hash) (int, error) {
	n := 0
	err := s.eachReachable(h, func(commitInfo) { n++ })
	return n, err
}

// eachReachable calls visit with every commit reachable from h, once each,
// in no particular order. Callers hold s.mu.
func (s *Store) eachReachable(h plumbing.Hash, visit func(commitInfo)) error {
	seen := map[plumbing.Hash]bool{h: true}
	stack := []plumbing.Hash{h}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ci, err := s.readCommit(c)
		if err != nil {
			return walkDamaged(c, err)
		}
		visit(ci)
		for _, p := range ci.parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return nil
}

func unionPaths(ms ...map[string]plumbing.Hash) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for p := range m {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

func sortPaths(ps []MergePath) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Path < ps[j].Path })
}

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}
