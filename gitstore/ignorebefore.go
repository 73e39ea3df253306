package gitstore

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/strata-dev/strata/atomicfile"
	"github.com/strata-dev/strata/gitstore/internal/odb"
	"github.com/strata-dev/strata/state"
)

// A file the project's .gitignore ignored stays private after a .gitignore
// change un-ignores it (attack19-final F1). The .gitignore files are the
// repository's, written by anyone who can push: a pushed commit that drops
// the line ignoring `prod.env`, or adds `!prod.env`, together with a
// .strata.yaml glob naming it, would otherwise have the victim's next
// `git pull` and `strata sync` publish their secret. So the ignore rules of
// every commit this work tree had checked out count, not only the ones on
// disk now:
//
//   - HEAD's own .gitignore files (a pull stopped for its merge commit has
//     the pushed .gitignore on disk, not yet in HEAD), and those of the
//     HEADs of the repository's other work trees, and
//   - those of each earlier HEAD whose .gitignore files differ from the
//     next one strata saw: strata notes the HEAD it last saw
//     (<gitdir>/strata/gitrules-head) and, when HEAD moved and any
//     .gitignore differs, keeps the earlier commit's .gitignore files (only
//     those, as a tree) on the local ref refs/strata/gitrules (one for
//     the repository), which no sync pushes and which keeps them from
//     git's gc. Where strata has never run, the commits of HEAD's recent
//     reflog are taken instead.
//
// A file one of those rule sets ignores, that git does not track, is
// private ("ignored by git at commit …") until the user's own git config
// keeps it (strata.keepPrivate), as a file ignored now is. Unlike
// info/exclude and core.excludesFile, which are this machine's alone and
// read only as they are now (Ignores.excludedHere), these come with the
// repository.

// rulesSeen is the file naming the HEAD strata last compared.
func (s *Store) rulesSeen() string {
	return filepath.Join(s.gitDir, "strata", "gitrules-head")
}

// RulesRef is the local ref keeping the .gitignore files of earlier
// HEADs (see above). It is one for the repository, linked worktrees
// included: a worktree added at a commit that un-ignores a file, where the
// secret is then copied, counts what the others saw (attack20-ignore F2).
func (s *Store) RulesRef() string { return "refs/strata/gitrules" }

// otherHeads returns the commits the HEADs of the repository's other work
// trees (the main one and every linked one but this) name, and the HEAD
// strata last saw in each (its gitrules-head): their .gitignore files count
// too. A worktree added after the main one pulled an un-ignoring commit
// with plain git knew nothing of the rules the main one had seen
// (attack20-ignore-verify N4).
func (s *Store) otherHeads() []plumbing.Hash {
	dirs := []string{s.commonDir}
	if ents, err := os.ReadDir(filepath.Join(s.commonDir, "worktrees")); err == nil {
		for _, e := range ents {
			dirs = append(dirs, filepath.Join(s.commonDir, "worktrees", e.Name()))
		}
	}
	var files []string
	for _, d := range dirs {
		if filepath.Clean(d) != filepath.Clean(s.gitDir) { // this work tree's own are read as its own
			files = append(files, filepath.Join(d, "HEAD"), filepath.Join(d, "strata", "gitrules-head"))
		}
	}
	var out []plumbing.Hash
	for _, f := range files {
		// a HEAD that is a symbolic link (core.preferSymlinkRefs) is read
		// as git reads it: skipped, its rules did not count here
		ref, h := readHeadFile(f)
		if ref != "" {
			var err error
			if h, err = s.readRef(ref); err != nil {
				continue
			}
		}
		if !h.IsZero() {
			out = append(out, h)
		}
	}
	return out
}

// reflogSeed is how many entries of HEAD's reflog are taken where strata
// has not seen a HEAD before.
const reflogSeed = 50

// ruleSet is the .gitignore files of one commit: root is a tree holding
// them at their paths (a commit's whole tree, or a tree of only them).
type ruleSet struct {
	label string // the commit, for the reason a file is private
	root  plumbing.Hash
	blobs map[string]plumbing.Hash // each rule file's blob by path, zero for none (setBlob)
}

func newRuleSet(label string, root plumbing.Hash) *ruleSet {
	return &ruleSet{label: label, root: root}
}

// setDir is what dirRules is for the work tree: the patterns that apply in
// one folder of a rule set, whether the folder is ignored, and the blob of
// its own .gitignore (zero when it has none).
type setDir struct {
	ps      ignoreList
	ignored bool
	blob    plumbing.Hash
	huge    string // the .gitignore above it over keptRuleMax, when that is why it is ignored
}

// A repository can keep thousands of rule sets (attack20-f10 P1), most of
// them with the same rule files along the folders of any one path: what a
// set answers for a path depends only on the blobs of the rule files of
// the path's folders (its chain). So each set's chain is found (setBlob,
// through the look-up memo, rulememo.go) and each different chain read
// and matched once (chainDir, chainAttrs), however many sets share it.

// IgnoredBefore returns the commit (short) whose .gitignore files ignore
// rel while the work tree's rules do not, or "" when none does or git
// tracks rel. A rule set whose .gitignore files along rel's folders are the
// work tree's own is not asked: it answers as the work tree does. When the
// earlier rule sets cannot be read, every untracked file counts as ignored
// by them ("…unreadable…"): a damaged record keeps files private rather than
// publishing them.
func (ig *Ignores) IgnoredBefore(rel string) string {
	if ig == nil || ig.store == nil || rel == "" || strings.HasPrefix(rel, "~") {
		return ""
	}
	segs := strings.Split(rel, "/")
	ig.mu.Lock()
	defer ig.mu.Unlock()
	defer ig.store.saveRuleMemo()
	ig.loadSets()
	folded := ig.joined(segs)
	if ig.byPattern(segs) {
		return "" // ignored now (Ignored)
	}
	found := ""
	if ig.setsErr != nil {
		found = unreadPrefix + ig.setsErr.Error() + ")"
	}
	dirs := segs[:len(segs)-1]
	own := make([]plumbing.Hash, len(segs))
	for i := range own {
		own[i] = ig.dir(segs[:i]).blob
	}
	for _, g := range ig.chainGroups(dirs, ".gitignore") {
		if found != "" {
			break
		}
		if slices.Equal(g.chain, own) {
			continue // the work tree's own: it answers as they do
		}
		if d := ig.chainDir(dirs, g.chain); d.ignored || d.ps.excluded(folded, false, ig.fold, &ig.steps) {
			found = g.label
			if d.huge != "" && d.ignored {
				found += ", whose " + d.huge
			}
		}
	}
	if found == "" || ig.isTrackedExact(rel) {
		return ""
	}
	return found
}

// unreadPrefix starts IgnoredBefore's answer when the earlier rule sets
// cannot be read (RulesUnreadAt).
const unreadPrefix = "? ("

// RulesUnreadAt reports whether at, an answer of IgnoredBefore, says the
// earlier rule sets cannot be read rather than naming a commit whose rules
// ignore the path, and why they cannot.
func RulesUnreadAt(at string) (why string, ok bool) {
	why, ok = strings.CutPrefix(at, unreadPrefix)
	return strings.TrimSuffix(why, ")"), ok
}

// FilteredBefore returns the commit (short) whose .gitattributes files,
// with this machine's attribute files, give rel a filter driver, and that
// driver, when the work tree's rules give it none ("", "" when no rule
// set does): a pushed commit that drops `creds.json filter=git-crypt`, or
// adds `creds.json -filter`, does not make the plaintext shareable
// (attack20-headline H1), as a dropped .gitignore line does not
// (IgnoredBefore). A tracked file is concerned too: git publishes only its
// cleaned form. When the earlier rule sets cannot be read (HEAD's commit
// missing, refs/strata/gitrules damaged), every file counts as filtered by
// them, tracked or not — whether one of them filtered it, and so whether
// the work tree holds a plaintext git publishes only encrypted, is
// unknown —, and the answer is at = why they cannot be read, driver = ""
// (no driver is known: config.WhyFilterUnread).
func (ig *Ignores) FilteredBefore(rel string) (at, driver string) {
	if ig == nil || ig.store == nil || rel == "" || strings.HasPrefix(rel, "~") {
		return "", ""
	}
	ig.mu.Lock()
	defer ig.mu.Unlock()
	defer ig.store.saveRuleMemo()
	ig.loadSets()
	if ig.setsErr != nil {
		return ig.setsErr.Error(), ""
	}
	if ig.attrs == nil {
		ig.attrs = ig.store.Attributes()
	}
	segs := strings.Split(rel, "/")
	dirs := segs[:len(segs)-1]
	for _, g := range ig.chainGroups(dirs, ".gitattributes") {
		if d := ig.chainAttrs(dirs, g.chain).Filter(rel); d != "" {
			return g.label, d
		}
	}
	return "", ""
}

// chainGroup is the sets that have one chain of rule files along a
// folder's path, by the first of them.
type chainGroup struct {
	label string
	chain []plumbing.Hash
}

// chainGroups returns the different chains of the rule files named name
// the sets have along the folders dirs lead through, in the order of the
// first set having each: what each file of the folder is asked goes
// through these, not through every set again (1 000 kept files of one
// folder, 2 503 sets: a status took 1.4-1.9 s). Callers hold ig.mu.
func (ig *Ignores) chainGroups(dirs []string, name string) []chainGroup {
	key := name + "\x00" + strings.Join(dirs, "/")
	if gs, ok := ig.groups[key]; ok {
		return gs
	}
	var gs []chainGroup
	seen := map[string]bool{}
	add := func(label string, chain []plumbing.Hash) {
		if k := chainKey(dirs, chain); !seen[k] {
			seen[k] = true
			gs = append(gs, chainGroup{label, chain})
		}
	}
	for _, set := range ig.sets {
		add(set.label, ig.setChain(set, dirs, name))
	}
	if ig.kept != nil {
		for _, g := range ig.kept.keptGroups(dirs, name) {
			add(g.label, g.chain)
		}
	}
	ig.groups[key] = gs
	return gs
}

// setChain is the blobs of the rule files named name of set in the
// folders dirs lead through, the root first (len(dirs)+1 of them; zero
// for none, unreadableBlob for one a tree on the way to could not be
// read). Callers hold ig.mu.
func (ig *Ignores) setChain(set *ruleSet, dirs []string, name string) []plumbing.Hash {
	ig.setChains++
	out := make([]plumbing.Hash, len(dirs)+1)
	for i := range out {
		out[i] = ig.setBlob(set, fileIn(strings.Join(dirs[:i], "/"), name))
	}
	return out
}

// chainKey names the rule files chain of the folders dirs lead through.
func chainKey(dirs []string, chain []plumbing.Hash) string {
	var b strings.Builder
	b.WriteString(strings.Join(dirs, "/"))
	b.WriteByte(0)
	for _, h := range chain {
		b.Write(h[:])
	}
	return b.String()
}

// NoteHead reads the rule sets IgnoredBefore asks, once: HEAD is compared
// with the HEADs before it and noted as seen.
func (ig *Ignores) NoteHead() {
	if ig == nil || ig.store == nil {
		return
	}
	ig.mu.Lock()
	defer ig.mu.Unlock()
	ig.loadSets()
}

// RulesErr says why the rule sets of HEAD and the earlier HEADs cannot be
// read (HEAD's commit missing, refs/strata/gitrules damaged), nil when
// they can; KeptRulesUnread tells the kept ref's case. doctor shows it.
func (ig *Ignores) RulesErr() error {
	if ig == nil || ig.store == nil {
		return nil
	}
	ig.mu.Lock()
	defer ig.mu.Unlock()
	ig.loadSets()
	return ig.setsErr
}

// KeptRulesUnread reports whether err, from RulesErr, is about
// refs/strata/gitrules, not HEAD.
func (s *Store) KeptRulesUnread(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), s.RulesRef()+" unreadable")
}

func (ig *Ignores) loadSets() {
	if !ig.setsRead {
		ig.setsRead = true
		ig.sets, ig.kept, ig.setsErr = ig.store.ruleSets()
		ig.chains = map[string]*setDir{}
		ig.attrChains = map[string]*Attributes{}
		ig.groups = map[string][]chainGroup{}
	}
}

// setBlob is the blob of the rule file at path (a .gitignore or a
// .gitattributes) in set, zero when it has none, found without reading it.
// Callers hold ig.mu.
func (ig *Ignores) setBlob(set *ruleSet, path string) plumbing.Hash {
	if b, ok := set.blobs[path]; ok {
		return b
	}
	if set.blobs == nil {
		set.blobs = map[string]plumbing.Hash{}
	}
	b := ig.store.treeRuleBlob(set.root, path)
	set.blobs[path] = b
	return b
}

// ruleFileIn is the path of the .gitignore of the folder key.
func ruleFileIn(key string) string { return fileIn(key, ".gitignore") }

// fileIn is the repo-relative path of the file name in the folder key
// ("" for the root).
func fileIn(key, name string) string {
	if key == "" {
		return name
	}
	return key + "/" + name
}

// treeRuleBlob is the blob of the regular file at path in tree root, zero
// when there is none.
func (s *Store) treeRuleBlob(root plumbing.Hash, path string) plumbing.Hash {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, _, unreadable := s.ruleEntry(root, path)
	if unreadable {
		return unreadableBlob // equal to no work tree's: the set is asked, and answers unreadable
	}
	return e.Hash
}

// unreadableBlob stands for a rule file whose folder's tree could not be
// read.
var unreadableBlob = plumbing.NewHash("ffffffffffffffffffffffffffffffffffffffff")

// chainDir is the rules of the folder segs where the .gitignore files of
// it and the folders above it are chain (the root's first), read once for
// every set with that chain. Callers hold ig.mu.
func (ig *Ignores) chainDir(segs []string, chain []plumbing.Hash) *setDir {
	key := chainKey(segs, chain)
	if d, ok := ig.chains[key]; ok {
		return d
	}
	d := &setDir{}
	if len(segs) > 0 {
		parent := ig.chainDir(segs[:len(segs)-1], chain[:len(segs)])
		d.ps, d.huge = parent.ps, parent.huge
		d.ignored = parent.ignored || parent.ps.excluded(ig.joined(segs), true, ig.fold, &ig.steps)
	}
	if !d.ignored {
		folder := strings.Join(segs, "/")
		blob := chain[len(segs)]
		data, ok, unreadable, huge := ig.store.keptRuleFile(blob)
		switch {
		case unreadable:
			// a partial clone's missing blob or tree that could not be
			// fetched: what it ignored is not known, so everything below
			// counts as ignored (attack20-last F9: it was read as no file)
			d.blob, d.ignored = unreadableBlob, true
			d.huge = ruleFileIn(folder) + " could not be read (an object of a partial clone git could not fetch, or a damaged one)"
		case huge:
			// not read again for every command (a pushed 97 MB one, once
			// HEAD, made every status take 10 s: attack20-ignore F6), nor
			// dropped (what it alone ignored would become shareable: N3):
			// everything below it counts as ignored by it
			d.blob, d.ignored = blob, true
			d.huge = ruleFileIn(folder) + " of over 1 MB is not read again; git update-ref -d " + ig.store.RulesRef() + " forgets it"
		case ok:
			d.blob = blob
			if own := parseIgnoreLines(data, folder, ig.fold); len(own) > 0 {
				d.ps = append(append(ignoreList{}, d.ps...), own...)
			}
		}
	}
	ig.chains[key] = d
	return d
}

// chainAttrs is the attribute rules, with this machine's files, where the
// .gitattributes files of the folders dirs lead through are chain (the
// root's first), read once for every set with that chain. Callers hold
// ig.mu.
func (ig *Ignores) chainAttrs(dirs []string, chain []plumbing.Hash) *Attributes {
	key := chainKey(dirs, chain)
	if a, ok := ig.attrChains[key]; ok {
		return a
	}
	blobs := map[string]plumbing.Hash{}
	for i := range chain {
		blobs[strings.Join(dirs[:i], "/")] = chain[i]
	}
	a := ig.attrs.atBlobs(ig.store, blobs)
	ig.attrChains[key] = a
	return a
}

// keptRuleFile reads rule file blob of a rule set (the zero hash: none),
// without a leading byte order mark, as readRuleFile reads one on disk:
// unreadable when it is unreadableBlob or cannot be read, a partial
// clone's fetched first as any read of git's is; huge, and not read, when
// over keptRuleMax (a rule set's is not read again for every command).
func (s *Store) keptRuleFile(blob plumbing.Hash) (data string, ok, unreadable, huge bool) {
	switch {
	case blob.IsZero():
		return "", false, false, false
	case blob == unreadableBlob:
		return "", false, true, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, size, err := s.objects.Stat(blob)
	if err != nil {
		// not here: a partial clone fetches it (readObject), else it
		// cannot be known
		if _, _, rerr := s.readObject(blob); rerr != nil {
			return "", false, true, false
		}
		if _, size, err = s.objects.Stat(blob); err != nil {
			return "", false, true, false
		}
	}
	if size > keptRuleMax {
		return "", false, false, true
	}
	t, raw, err := s.readObject(blob)
	if err != nil || t != plumbing.BlobObject {
		return "", false, false, false
	}
	return strings.TrimPrefix(string(raw), "\ufeff"), true, false, false
}

// ruleSets returns HEAD's rule set, the other work trees' and those a move
// of HEAD found but could not keep (noteHead), each to be looked up in its
// tree, and the index of those refs/strata/gitrules keeps (nil when there
// are none, or too many rule files to index: then they are among the
// sets). A repository without a commit has no HEAD set; a HEAD naming a
// commit that cannot be read is an error, as the kept ref's are: every
// untracked file then counts as ignored by the sets (IgnoredBefore). The
// error says which of the two could not be read.
func (s *Store) ruleSets() ([]*ruleSet, *keptIndex, error) {
	var sets []*ruleSet
	head, err := s.headCommit()
	if err != nil {
		return nil, nil, err
	}
	if !head.IsZero() {
		s.mu.Lock()
		tree, terr := s.commitTree(head)
		s.mu.Unlock()
		if terr != nil {
			return nil, nil, headUnreadable(head, terr)
		}
		sets = append(sets, newRuleSet("HEAD", tree))
	}
	for _, h := range s.otherHeads() {
		if h == head {
			continue
		}
		s.mu.Lock()
		tree, err := s.commitTree(h)
		s.mu.Unlock()
		if err == nil {
			sets = append(sets, newRuleSet(state.ShortID(h.String()), tree))
		}
	}
	keptErr := func(err error) error { return fmt.Errorf("%s unreadable: %w", s.RulesRef(), err) }
	unkept, err := s.noteHead(head)
	if err != nil {
		return nil, nil, keptErr(err)
	}
	for _, e := range unkept { // the sets that could not be kept, for this run
		sets = append(sets, newRuleSet(state.ShortID(e.Name), e.Hash))
	}
	kept, err := s.readRef(s.RulesRef())
	if errors.Is(err, state.ErrNotFound) {
		return sets, nil, nil
	} else if err != nil {
		return nil, nil, keptErr(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tree, err := s.commitTree(kept)
	if err != nil {
		return nil, nil, keptErr(err)
	}
	entries, err := s.tree(tree)
	if err != nil {
		return nil, nil, keptErr(err)
	}
	x, err := s.keptIndex(kept, entries)
	if err == nil {
		return sets, x, nil
	} else if !errors.Is(err, errIndexTooBig) {
		return nil, nil, keptErr(err)
	}
	for _, e := range entries { // too large to index: each looked up in its tree
		if e.IsDir() {
			sets = append(sets, newRuleSet(state.ShortID(e.Name), e.Hash))
		}
	}
	return sets, nil, nil
}

// headCommit is the commit HEAD names, zero on an unborn branch (HEAD
// names a branch that has no commit yet: nothing is ignored by HEAD).
// A HEAD that names an object the store cannot give as a commit (a clone
// made with --shared whose source moved away, a pruned commit) is not
// unborn: the error says so (headUnreadable), and its rules count as
// unreadable, as a tree of HEAD's that cannot be read does.
func (s *Store) headCommit() (plumbing.Hash, error) {
	h, err := s.readRef("HEAD")
	if errors.Is(err, state.ErrNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("HEAD unreadable: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.peel(h)
	if err != nil {
		return plumbing.ZeroHash, headUnreadable(h, err)
	}
	return c, nil
}

// headUnreadable is the error of a HEAD naming commit h, which could not
// be read (err).
func headUnreadable(h plumbing.Hash, err error) error {
	var m *missingObject
	if errors.As(err, &m) {
		return fmt.Errorf("HEAD unreadable: its commit %s is not in the object store", state.ShortID(h.String()))
	}
	return fmt.Errorf("HEAD unreadable: %w", err)
}

// noteHead compares head with the HEAD strata saw last, and with every
// commit HEAD's reflog names since (its last reflogSeed entries at most; all
// of them where strata has seen no HEAD yet): the .gitignore files of each
// that differ from head's are kept on refs/strata/gitrules before head is
// noted as seen (so a crash between loses nothing: the next run compares
// again). It returns the rule sets it found and could not keep, for this
// run to use (a repository this user may read but not write).
func (s *Store) noteHead(head plumbing.Hash) ([]treeEntry, error) {
	seenFile := s.rulesSeen()
	// strata's own note: one that cannot be read (a named pipe, a
	// directory, garbage) is as none, and HEAD's reflog is compared instead
	data, _ := state.ReadRegular(seenFile, 4096, false)
	seen, logSeen, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	logSeen, shallowSeen, _ := strings.Cut(logSeen, "\n")
	logFile := filepath.Join(s.gitDir, "logs", "HEAD")
	logSize := int64(0)
	if fi, err := os.Stat(logFile); err == nil {
		logSize = fi.Size()
	}
	shallow := s.shallowStamp()
	if shallowSeen == "" {
		shallowSeen = "-" // noted before strata noted it: not shallow
	}
	if shallow != shallowSeen {
		// a shallow clone deepened (git fetch --unshallow, --deepen): its
		// history was read only down to the boundary it had, so it is read
		// again as where no HEAD was seen (attack21-p1 P1-3)
		seen = ""
	}
	if seen == head.String() && logSeen == strconv.FormatInt(logSize, 10) {
		return nil, nil
	}
	var earlier []plumbing.Hash
	if plumbing.IsHash(seen) && seen != plumbing.ZeroHash.String() {
		earlier = append(earlier, plumbing.NewHash(seen))
	}
	from, err := strconv.ParseInt(logSeen, 10, 64)
	if err != nil || from > logSize {
		from = 0 // never seen, or the reflog was cut since: its end counts
	}
	for _, c := range headsSince(logFile, from, reflogSeed) {
		earlier = append(earlier, plumbing.NewHash(c))
	}
	var keep []treeEntry // name: the commit; hash: its tree
	s.mu.Lock()
	headTree := odb.EmptyTree
	if !head.IsZero() {
		if headTree, err = s.commitTree(head); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	differ := map[[2]plumbing.Hash]bool{}
	if seen == "" && !head.IsZero() {
		// no HEAD seen yet here (a fresh clone, or one without a reflog):
		// the rule changes among the recent history of HEAD, and of the
		// HEADs its reflog names, count too (attack20-ignore F4,
		// attack20-headline H9, attack21-inc I-3)
		before, err := s.ruleChangesBefore(append([]plumbing.Hash{head}, earlier...), historyScan, historyScanAll, differ)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		earlier = append(earlier, before...)
	}
	for _, c := range earlier {
		if c == head {
			continue
		}
		tree, err := s.commitTree(c)
		if errors.Is(err, state.ErrNotFound) {
			continue // gone (a gc after a rebase): nothing of it to keep
		} else if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		d, err := s.ignoresDiffer(tree, headTree, differ, 0)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		if d {
			keep = append(keep, treeEntry{Name: c.String(), Mode: filemode.Dir, Hash: tree})
		}
	}
	s.mu.Unlock()
	if len(keep) > 0 {
		if err := s.keepRuleSets(keep); err != nil {
			return keep, nil // not noted as seen: compared again next time
		}
	}
	s.writeSeen(seenFile, head, logSize, shallow) // best effort, as above
	return nil, nil
}

// historyScan is how many of HEAD's first parents are read, where strata
// has seen no HEAD yet, for the commits before a change of the rule files;
// historyScanAll how many commits in all, the parents of merges included.
var (
	historyScan    = 300
	historyScanAll = 3000
)

// ruleChangesBefore walks HEAD's history for the commits before a change
// of the .gitignore or .gitattributes files: each parent whose rule files
// differ from its child's. Its first parents come first, n of them (a
// history of many merged branches had the ignoring commit 61 first
// parents back but past 300 commits read: attack20-close F10), then every
// parent, breadth first (a branch merged with `-s ours` hid the ignoring
// commits behind a merge's second parent: attack20-last F7), up to all
// commits read in all. The walk starts at each of starts, HEAD first and
// then the HEADs its reflog names (a clone whose first strata run came
// after a checkout of an older commit walked from there alone, and the
// rule changes of the history it was cloned at were never read:
// attack21-inc I-3); each start's first parents stop at a commit an
// earlier start's reached. A commit the walk cannot read is passed over (a
// shallow clone's boundary, a gc'd history). Callers hold s.mu.
func (s *Store) ruleChangesBefore(starts []plumbing.Hash, n, all int, differ map[[2]plumbing.Hash]bool) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	read := 0
	// step compares commit c with each of its parents (the first only, or
	// all) and returns them
	step := func(c plumbing.Hash, firstOnly bool) ([]plumbing.Hash, error) {
		cur, err := s.readCommit(c)
		read++
		if err != nil {
			return nil, nil
		}
		parents := cur.parents
		if firstOnly && len(parents) > 1 {
			parents = parents[:1]
		}
		for _, p := range parents {
			parent, err := s.readCommit(p)
			if err != nil {
				continue
			}
			d, err := s.ignoresDiffer(parent.tree, cur.tree, differ, 0)
			if err != nil {
				if errors.Is(err, state.ErrNotFound) {
					continue
				}
				return nil, err
			}
			if d && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		return parents, nil
	}
	walked := map[plumbing.Hash]bool{}
	for _, start := range starts {
		for c, i := start, 0; i < n && !walked[c]; i++ {
			walked[c] = true
			ps, err := step(c, true)
			if err != nil {
				return nil, err
			}
			if len(ps) == 0 {
				break
			}
			c = ps[0]
		}
	}
	// breadth first: HEAD's history with the whole bound, as when HEAD was
	// the only start (sharing it took HEAD's history from 3 000 commits to
	// 500 where five branches were in the reflog: attack21-reflog R-1),
	// then the other starts' with a bound of their own
	seen := map[plumbing.Hash]bool{}
	for _, from := range [][]plumbing.Hash{starts[:min(1, len(starts))], starts[min(1, len(starts)):]} {
		if err := s.ruleChangesBreadth(from, all, seen, step, &read); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ruleChangesBreadth is ruleChangesBefore's breadth-first walk from the
// commits from, up to all commits read, past those seen already. Callers
// hold s.mu.
func (s *Store) ruleChangesBreadth(from []plumbing.Hash, all int, seen map[plumbing.Hash]bool, step func(plumbing.Hash, bool) ([]plumbing.Hash, error), read *int) error {
	*read = 0
	var queue []plumbing.Hash
	for _, start := range from {
		if !seen[start] {
			seen[start] = true
			queue = append(queue, start)
		}
	}
	for len(queue) > 0 && *read < all {
		ps, err := step(queue[0], false)
		queue = queue[1:]
		if err != nil {
			return err
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return nil
}

// headsSince returns the commits the entries of the reflog file name
// written after its first from bytes move from and to, newest first, each
// once: at most n entries, from at most its last 64 KB.
func headsSince(name string, from int64, n int) []string {
	f, err := openRegular(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	const tail = 64 << 10
	off := max(from, st.Size()-tail)
	if off >= st.Size() {
		return nil
	}
	buf := make([]byte, st.Size()-off)
	k, _ := f.ReadAt(buf, off)
	lines := strings.Split(strings.TrimRight(string(buf[:k]), "\n"), "\n")
	if off > from && len(lines) > 0 {
		lines = lines[1:] // the first may be cut
	}
	var out []string
	seen := map[string]bool{}
	for i := len(lines) - 1; i >= 0 && i >= len(lines)-n; i-- {
		o, nw, ok := reflogMove([]byte(lines[i]))
		if !ok {
			continue
		}
		for _, h := range []plumbing.Hash{nw, o} {
			if c := h.String(); !h.IsZero() && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// keepRuleSets adds the rule sets (named by commit, with the commit's
// tree) to refs/strata/gitrules, each as a tree of only its rule files,
// each such tree once. The new trees go to the disk
// together, one pack when they are many (a first run can keep thousands:
// attack20-f10 P1 wrote 2 503 loose trees, 138 MB, one fsync each).
func (s *Store) keepRuleSets(add []treeEntry) error {
	_, err := s.updateRef(s.RulesRef(), func(parent plumbing.Hash) (_ plumbing.Hash, err error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.objects.Begin()
		defer func() {
			if err != nil {
				s.objects.Abort()
			}
		}()
		var out []treeEntry
		only := map[plumbing.Hash]plumbing.Hash{}
		for _, e := range add {
			t, err := s.ignoreFilesOnly(e.Hash, only, 0)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			out = append(out, treeEntry{Name: e.Name, Mode: filemode.Dir, Hash: t})
		}
		var entries []treeEntry
		if !parent.IsZero() {
			tree, err := s.commitTree(parent)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			old, err := s.tree(tree)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			entries = append(entries, old...)
		}
		have := map[plumbing.Hash]bool{}
		for _, e := range entries {
			have[e.Hash] = true
		}
		n := len(entries)
		for _, e := range out {
			if !have[e.Hash] && e.Hash != odb.EmptyTree {
				have[e.Hash] = true
				entries = append(entries, e)
			}
		}
		if n == len(entries) {
			return plumbing.ZeroHash, state.ErrUnchanged
		}
		tree, err := s.writeObject(plumbing.TreeObject, odb.EncodeTree(entries))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		msg := "strata: the .gitignore files of earlier HEADs of this work tree\n\n" +
			"A file they ignore stays private for strata until git config strata.keepPrivate names it.\n"
		c, err := s.writeCommit(tree, plumbing.ZeroHash, time.Unix(0, 0).UTC(), msg)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if err := s.objects.Flush(PackMin, Fsync); err != nil {
			return plumbing.ZeroHash, err
		}
		return c, nil
	})
	if errors.Is(err, state.ErrUnchanged) {
		return nil
	}
	return err
}

// writeSeen notes head as the HEAD last compared, how long HEAD's reflog
// was then, and the shallow clone's boundary then (shallowStamp).
func (s *Store) writeSeen(name string, head plumbing.Hash, logSize int64, shallow string) error {
	if err := s.writable(); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(s.gitDir, "HEAD")); err != nil {
		// the git directory is gone or going (rm -rf .git under a
		// watcher): a note written now would make it again, or keep its
		// removal from ending ("directory not empty")
		return nil
	}
	if err := s.Shared().MkdirAll(filepath.Dir(name)); err != nil {
		return err
	}
	return atomicfile.WriteFixed(name, []byte(head.String()+"\n"+strconv.FormatInt(logSize, 10)+"\n"+shallow+"\n"), s.Shared().FixFile)
}

// shallowStamp names a shallow clone's boundary (<commondir>/shallow):
// "-" for none, else a digest of its commits.
func (s *Store) shallowStamp() string {
	b := s.shallowList()
	if len(b) == 0 {
		return "-"
	}
	ids := make([]string, 0, len(b))
	for h := range b {
		ids = append(ids, h.String())
	}
	slices.Sort(ids)
	sum := sha1.Sum([]byte(strings.Join(ids, "\n")))
	return hex.EncodeToString(sum[:])
}

// isRuleFile reports whether a tree entry is a .gitignore or a
// .gitattributes (not a folder of that name).
func isRuleFile(e treeEntry) bool {
	return !e.IsDir() && (e.Name == ".gitignore" || e.Name == ".gitattributes")
}

// isRuleBlob reports whether a tree entry is a rule file git reads: a
// regular (or executable) .gitignore or .gitattributes, not a symbolic
// link of that name.
func isRuleBlob(e treeEntry) bool {
	return isRuleFile(e) && (e.Mode == filemode.Regular || e.Mode == filemode.Executable)
}

// keptRuleMax is the largest .gitignore of a rule set that is read: every
// command would read a kept one again, and a pushed 97 MB .gitignore, once
// HEAD and then reverted, made every `strata status` take 10 s and 700 MB
// (attack20-ignore F6); a real one is a few KB. Below a larger one,
// everything counts as ignored by its set (chainDir), or filtered.
const keptRuleMax = 1 << 20

// maxRuleDepth bounds the folders walked for .gitignore files: git's own
// limit on tree depth (core.maxTreeDepth).
const maxRuleDepth = 4096

// ignoresDiffer reports whether trees a and b hold different .gitignore
// files, reading only the subtrees that differ. Pairs already compared are
// in memo. Callers hold s.mu.
func (s *Store) ignoresDiffer(a, b plumbing.Hash, memo map[[2]plumbing.Hash]bool, depth int) (bool, error) {
	if a == b {
		return false, nil
	}
	if d, ok := memo[[2]plumbing.Hash{a, b}]; ok {
		return d, nil
	}
	if depth > maxRuleDepth {
		return true, nil
	}
	ea, err := s.tree(a)
	if err != nil {
		return false, err
	}
	eb, err := s.tree(b)
	if err != nil {
		return false, err
	}
	inB := make(map[string]treeEntry, len(eb))
	for _, e := range eb {
		inB[e.Name] = e
	}
	differ := false
	for _, e := range ea {
		if differ {
			break
		}
		o, ok := inB[e.Name]
		delete(inB, e.Name)
		switch {
		case isRuleFile(e), ok && isRuleFile(o):
			differ = !ok || o.Hash != e.Hash || o.Mode != e.Mode
		case e.IsDir() && ok && o.IsDir():
			differ, err = s.ignoresDiffer(e.Hash, o.Hash, memo, depth+1)
		default:
			for _, x := range []treeEntry{e, o} {
				if x.IsDir() && !differ {
					differ, err = s.hasIgnoreFile(x.Hash, map[plumbing.Hash]bool{}, depth+1)
				}
			}
		}
		if err != nil {
			return false, err
		}
	}
	for _, o := range inB { // only in b
		if differ {
			break
		}
		if isRuleFile(o) {
			differ = true
		} else if o.IsDir() {
			if differ, err = s.hasIgnoreFile(o.Hash, map[plumbing.Hash]bool{}, depth+1); err != nil {
				return false, err
			}
		}
	}
	memo[[2]plumbing.Hash{a, b}] = differ
	return differ, nil
}

// hasIgnoreFile reports whether tree h holds a .gitignore file at any
// depth; trees already looked at are in seen. Callers hold s.mu.
func (s *Store) hasIgnoreFile(h plumbing.Hash, seen map[plumbing.Hash]bool, depth int) (bool, error) {
	if seen[h] || depth > maxRuleDepth {
		return false, nil
	}
	seen[h] = true
	entries, err := s.tree(h)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if isRuleFile(e) {
			return true, nil
		}
	}
	for _, e := range entries {
		if e.IsDir() {
			if found, err := s.hasIgnoreFile(e.Hash, seen, depth+1); found || err != nil {
				return found, err
			}
		}
	}
	return false, nil
}

// ignoreFilesOnly writes the tree of only the .gitignore files of tree h
// (and the folders holding them), returning EmptyTree when it has none;
// shared subtrees are walked once (memo). Callers hold s.mu.
func (s *Store) ignoreFilesOnly(h plumbing.Hash, memo map[plumbing.Hash]plumbing.Hash, depth int) (plumbing.Hash, error) {
	if t, ok := memo[h]; ok {
		return t, nil
	}
	if depth > maxRuleDepth {
		return odb.EmptyTree, nil
	}
	entries, err := s.tree(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var out []treeEntry
	for _, e := range entries {
		switch {
		case isRuleBlob(e):
			// one over keptRuleMax is kept, but never read again
			// (keptRuleFile); one not here (a partial clone's) is kept
			// too, and fetched or taken for unreadable when read
			if _, size, err := s.objects.Stat(e.Hash); err != nil || size <= ruleFileMax {
				out = append(out, e)
			}
		case e.IsDir():
			t, err := s.ignoreFilesOnly(e.Hash, memo, depth+1)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if t != odb.EmptyTree {
				out = append(out, treeEntry{Name: e.Name, Mode: filemode.Dir, Hash: t})
			}
		}
	}
	t := odb.EmptyTree
	if len(out) > 0 {
		if t, err = s.writeObject(plumbing.TreeObject, odb.EncodeTree(out)); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	memo[h] = t
	return t, nil
}
