package conflict

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-dev/strata/graph"
	"github.com/strata-dev/strata/markdown"
	"github.com/strata-dev/strata/textdiff"
)

// MergeMemory merges two versions of a MEMORY.md that grew apart from base:
// the result is the version recorded later, byte for byte, less the lines of
// base the earlier version deleted and the later one left as they were (an
// edited line is a deleted one and an added one: its old form goes), with
// the runs of lines the earlier version added to base inserted where they
// belong. A run
// goes after the line it followed in the earlier version, found within the
// same section (goldmark locates the sections and their list items; an
// anchor inside a list item means after the whole item); when that line is
// gone, at the end of the same section; when the section is gone, at the
// end of the file. Lines the later version already holds are not added
// twice, and runs keep their order, so both sides' new lines are present.
// A line deleted on one side and edited on the other keeps the edit.
//
// A last line of earlier without its line end, one base does not hold, may
// be a line its writer is still writing (an append made in two writes, a
// record taken between them): it stays the last line of the result,
// without an end, after everything later holds, so that the rest of the
// write, appended to the file, completes it. Put among later's lines and
// ended there, the rest of the write became a line of its own on every
// machine (attack41 F1: "- B1 half" / "- A1" / " done"). So does such a
// last line of later's, when earlier's lines would go after it (a section
// earlier added at the end: attack42 F3).
func MergeMemory(base, earlier, later []byte) ([]byte, error) {
	if tail := unendedTail(base, earlier, later); tail != "" {
		out, err := mergeMemory(base, earlier[:len(earlier)-len(tail)], later)
		return withTail(out, err, tail)
	}
	if tail := unendedTail(base, later, earlier); tail != "" && !lineSet(earlier)[strings.TrimRight(tail, "\r")] {
		// later's lines keep their order: the tail goes last even when
		// the merge holds it already (later's own line, twice)
		out, err := mergeMemory(base, earlier, later[:len(later)-len(tail)])
		if err != nil {
			return out, err
		}
		return append(out, tail...), nil
	}
	return mergeMemory(base, earlier, later)
}

// withTail puts tail, earlier's unended last line (unendedTail), after the
// merge out, unless out holds it as a line already.
func withTail(out []byte, err error, tail string) ([]byte, error) {
	if err != nil || lineSet(out)[strings.TrimRight(tail, "\r")] {
		return out, err
	}
	return append(out, tail...), nil
}

// unendedTail is earlier's last line when it has no line end, base does
// not hold it, and later ends with a line end (or is empty): the tail
// MergeMemory keeps last. "" otherwise. (Asked with the sides swapped, it
// is later's.)
func unendedTail(base, earlier, later []byte) string {
	if len(earlier) == 0 || earlier[len(earlier)-1] == '\n' || len(later) > 0 && later[len(later)-1] != '\n' {
		return ""
	}
	tail := string(earlier[bytes.LastIndexByte(earlier, '\n')+1:])
	if strings.TrimSpace(tail) == "" || lineSet(base)[strings.TrimRight(tail, "\r")] {
		return ""
	}
	return tail
}

func mergeMemory(base, earlier, later []byte) ([]byte, error) {
	later = dropDeleted(base, earlier, later)
	runs := splitAtHeld(textdiff.Added(base, earlier), lineSet(later))
	if len(runs) == 0 {
		return later, nil
	}
	eol := lineEnd(later)
	lines := textdiff.Lines(earlier)
	ed, err := markdown.Parse(earlier)
	if err != nil {
		return nil, err
	}
	// the byte offset of each of earlier's lines
	offs := make([]int, len(lines)+1)
	for i, l := range lines {
		offs[i+1] = offs[i] + len(l)
	}
	out := later
	parsed := 0 // bytes of out parsed so far (mergeParseBudget)
	for i, r := range runs {
		if parsed += len(out); parsed > mergeParseBudget {
			return appendRuns(out, runs[i:]), nil
		}
		add := newLines(r.Lines, out)
		if add == nil {
			continue
		}
		add = withEnds(add, eol)
		anchor, section := "", []string(nil)
		if r.At > 0 {
			anchor = strings.TrimRight(lines[r.At-1], "\r\n")
			section = sectionPath(ed, offs[r.At-1])
		}
		if r.At > 0 && offs[r.At-1] >= ed.ReadTo() {
			// past where the earlier version was read (markdown.MaxBlocks,
			// MaxLines) its section is not known: the run goes right
			// after the line of out its anchor line stays as (by the
			// diff's pairing of lines, not by text: a blank line, a
			// closing fence or a repeated item is no place; attack35e
			// M1), else at the end of the file (attack35d M1: it went
			// into the last section read, thousands of lines from its
			// anchor)
			if parsed += len(out); parsed > mergeParseBudget {
				return appendRuns(out, runs[i:]), nil
			}
			p := afterKept(earlier, out, r.At-1, headingLevel(add) > 0)
			if _, open := fenceAround(earlier, offs[r.At]); !open {
				// the diff pairs lines by text: where the other side
				// rewrote the fences near the anchor, a closing fence can
				// pair with another block's opening one, putting a line
				// added outside any code block inside one (attack35f L1)
				p = pastFence(out, p)
			}
			out = splice(out, p, add)
			continue
		}
		od, err := markdown.Parse(out)
		if err != nil {
			return nil, err
		}
		p := insertPoint(od, out, anchor, section, r.At == 0)
		if lvl := headingLevel(add); lvl > 0 {
			// a run that opens a section would take in whatever follows it:
			// it goes before the next heading of its level or higher
			p = sectionBreak(od, out, p, lvl)
		}
		out = splice(out, p, add)
	}
	return out, nil
}

// dropDeleted removes from later the lines of base that earlier deleted
// and later kept where base had them, as a three-way merge takes one side's
// deletion (before, a line deleted on one machine came back at the next
// sync). When either diff is past textdiff's edit limit nothing is removed:
// a line kept too many is one the user can delete again, a line lost is
// not. When the last line goes, the line before it keeps its line end: taking
// it away could merge that line with one inserted after it.
func dropDeleted(base, earlier, later []byte) []byte {
	inE, okE := textdiff.Kept(base, earlier)
	inL, okL := textdiff.Kept(base, later)
	if !okE || !okL {
		return later
	}
	// a line earlier holds as often as base did moved, it was not deleted
	// (the edit script may pair another copy of it)
	baseLines := textdiff.Lines(base)
	gone := map[string]int{}
	for _, l := range baseLines {
		gone[strings.TrimRight(l, "\r\n")]++
	}
	for _, l := range textdiff.Lines(earlier) {
		gone[strings.TrimRight(l, "\r\n")]--
	}
	drop := map[int]bool{}
	for i := range inE {
		if l := strings.TrimRight(baseLines[i], "\r\n"); inE[i] < 0 && inL[i] >= 0 && gone[l] > 0 {
			drop[inL[i]] = true
			gone[l]--
		}
	}
	if len(drop) == 0 {
		return later
	}
	lines := textdiff.Lines(later)
	out := make([]byte, 0, len(later))
	for j, l := range lines {
		if !drop[j] {
			out = append(out, l...)
		}
	}
	return out
}

// lineEnd is the line end every line of data ends with, "\r\n" or "\n";
// "" when it mixes them or has none.
func lineEnd(data []byte) string {
	crlf, lf := bytes.Count(data, []byte("\r\n")), bytes.Count(data, []byte("\n"))
	switch {
	case lf == 0:
		return ""
	case crlf == lf:
		return "\r\n"
	case crlf == 0:
		return "\n"
	}
	return ""
}

// withEnds gives each line that ends with a line end the later version's
// own (eol, when it has one): a line the other side wrote with LF goes
// into a CRLF file as CRLF, and the reverse.
func withEnds(add []string, eol string) []string {
	if eol == "" {
		return add
	}
	out := make([]string, len(add))
	for i, l := range add {
		if t := strings.TrimRight(l, "\r\n"); t != l && strings.HasSuffix(l, "\n") {
			l = t + eol
		}
		out[i] = l
	}
	return out
}

// splitAtHeld cuts a run after each ATX heading line that the later
// version already holds: both sides made the same section (each machine's
// layer protocol writes "## Workflow state"), so the lines under it in the
// earlier version go under the later's heading, anchored to it, rather
// than after the line before the heading, in the section above
// (attack18-verify N3).
func splitAtHeld(runs []textdiff.Run, have map[string]bool) []textdiff.Run {
	var out []textdiff.Run
	for _, r := range runs {
		start := 0
		for i, l := range r.Lines {
			t := strings.TrimRight(l, "\r\n")
			if i+1 < len(r.Lines) && have[t] && atxHeading(t) {
				out = append(out, textdiff.Run{At: r.At + start, Lines: r.Lines[start : i+1]})
				start = i + 1
			}
		}
		out = append(out, textdiff.Run{At: r.At + start, Lines: r.Lines[start:]})
	}
	return out
}

// atxHeading reports whether a line is an ATX heading: up to three spaces,
// one to six "#", then a space or the end of the line.
func atxHeading(l string) bool {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return false
	}
	n := len(t) - len(strings.TrimLeft(t, "#"))
	return n >= 1 && n <= 6 && (len(t) == n || t[n] == ' ' || t[n] == '\t')
}

// mergeParseBudget bounds the bytes MergeMemory parses: it places each run
// by parsing the file it builds, so k runs in a file of n bytes cost k*n (a
// remote's version can bring ~2 000 runs, the edit bound, into a file of
// megabytes). Past it the remaining runs go at the end of the file, in
// order: every new line is still kept.
var mergeParseBudget = 32 << 20

// appendRuns adds the new lines of runs (newLines) at the end of out, in
// order, as one splice: what splicing each there in turn would make.
func appendRuns(out []byte, runs []textdiff.Run) []byte {
	have := lineSet(out)
	var all []string
	for _, r := range runs {
		keep := freshLines(r.Lines, have)
		for _, l := range keep {
			have[strings.TrimRight(l, "\r\n")] = true
		}
		all = append(all, keep...)
	}
	if len(all) == 0 {
		return out
	}
	return splice(out, len(out), all)
}

// newLines drops from a run the lines out already holds (blank lines aside);
// nil when nothing new is left.
func newLines(run []string, out []byte) []string { return freshLines(run, lineSet(out)) }

// lineSet holds each line of out, without its line ending.
func lineSet(out []byte) map[string]bool {
	have := map[string]bool{}
	for _, l := range textdiff.Lines(out) {
		have[strings.TrimRight(l, "\r\n")] = true
	}
	return have
}

// freshLines drops from a run the lines have holds (blank lines aside);
// nil when nothing new is left.
func freshLines(run []string, have map[string]bool) []string {
	var keep []string
	fresh := false
	for _, l := range run {
		t := strings.TrimRight(l, "\r\n")
		switch {
		case strings.TrimSpace(t) == "":
			keep = append(keep, l)
		case !have[t]:
			keep = append(keep, l)
			fresh = true
		}
	}
	if !fresh {
		return nil
	}
	return keep
}

// headingLevel is the highest level (smallest number) of the headings in
// lines, 0 when there is none.
func headingLevel(lines []string) int {
	d, err := markdown.Parse([]byte(strings.Join(lines, "")))
	if err != nil {
		return 0
	}
	lvl := 0
	for _, s := range d.Sections() {
		if lvl == 0 || s.Level < lvl {
			lvl = s.Level
		}
	}
	return lvl
}

// sectionBreak is the start of the first heading at or after p of level lvl
// or higher, else the end of out.
func sectionBreak(d *markdown.Doc, out []byte, p, lvl int) int {
	for _, s := range d.Sections() {
		if s.Start >= p && s.Level <= lvl {
			return s.Start
		}
	}
	return len(out)
}

// sectionPath is the heading path of the innermost section holding off;
// nil before the first heading.
func sectionPath(d *markdown.Doc, off int) []string {
	var p []string
	for _, s := range d.Sections() {
		if s.Start <= off && off < s.End {
			p = s.Path
		}
	}
	return p
}

func findSection(d *markdown.Doc, p []string) *markdown.Section {
	for _, s := range d.Sections() {
		if len(s.Path) == len(p) {
			same := true
			for i := range p {
				same = same && strings.EqualFold(s.Path[i], p[i])
			}
			if same {
				return &s
			}
		}
	}
	return nil
}

// insertPoint is where a run goes in out: after its anchor line (or the
// list item that line starts or continues) in the same section, else at the
// end of that section's content, else at the end of the file (the start,
// for a run that opened the earlier file).
func insertPoint(d *markdown.Doc, out []byte, anchor string, section []string, atStart bool) int {
	if atStart {
		return 0
	}
	lo, hi := 0, len(out)
	var sec *markdown.Section
	if section != nil {
		if sec = findSection(d, section); sec != nil {
			lo, hi = sec.Start, sec.End
		} else {
			return len(out)
		}
	} else if ss := d.Sections(); len(ss) > 0 {
		hi = ss[0].Start // the preamble before the first heading
	}
	for p := lo; p < hi; {
		e := bytes.IndexByte(out[p:], '\n')
		next := len(out)
		if e >= 0 {
			next = p + e + 1
		}
		if strings.TrimRight(string(out[p:next]), "\r\n") == anchor {
			if sec != nil {
				for _, it := range sec.Items {
					if it.Start <= p && p < it.End {
						return max(it.End, next)
					}
				}
			}
			return next
		}
		p = next
	}
	// the anchor is gone: the end of the section's content
	p := hi
	for p > lo {
		s := bytes.LastIndexByte(out[:p-1], '\n') + 1
		if strings.TrimSpace(string(out[s:p])) != "" {
			break
		}
		p = s
	}
	if p == lo {
		return hi
	}
	return p
}

// afterKept is where a run whose anchor, line at of earlier (0-based),
// lies past where earlier was read goes in out: right after the line of
// out that the anchor stays as by the diff of earlier and out
// (textdiff.Kept), or, when out dropped the anchor, after the line the
// nearest line above it stays as; at the end of out when the diff is past
// its edit limit, when no line above stayed, or for a run that opens a
// section (it would take in whatever follows it there).
func afterKept(earlier, out []byte, at int, opens bool) int {
	if opens {
		return len(out)
	}
	kept, ok := textdiff.Kept(earlier, out)
	if !ok {
		return len(out)
	}
	for i := min(at, len(kept)-1); i >= 0; i-- {
		if kept[i] < 0 {
			continue
		}
		p := 0 // the start of line kept[i]+1 of out
		for n := 0; n <= kept[i] && p < len(out); n++ {
			e := bytes.IndexByte(out[p:], '\n')
			if e < 0 {
				return len(out)
			}
			p += e + 1
		}
		return p
	}
	return len(out)
}

// fenceAround reports whether line start p of b lies inside a fenced code
// block, by a scan of b's lines from its start: a fence opens at a line of
// at most three spaces' indent and three or more backticks (with no
// backtick after them) or tildes, and closes at a line of the same
// character, at least as many, and nothing after them but blanks. It
// reads fences at the top level only (one inside a list item or a quote is
// indented or prefixed, and not seen), so it is an estimate, used past the
// parse bound where nothing better is known. end is the start of the line
// after the closing fence, or -1 when the block is never closed.
func fenceAround(b []byte, p int) (end int, open bool) {
	var ch byte
	n := 0 // the open fence's length; 0: none open
	for q := 0; q < len(b); {
		e := bytes.IndexByte(b[q:], '\n')
		next := len(b)
		if e >= 0 {
			next = q + e + 1
		}
		line := bytes.TrimRight(b[q:next], "\r\n")
		if q >= p && n == 0 {
			return -1, false
		}
		c, k, rest := fenceLine(line)
		switch {
		case n == 0 && k > 0 && !(c == '`' && bytes.IndexByte(rest, '`') >= 0):
			if q >= p {
				return -1, false
			}
			ch, n = c, k
		case n > 0 && c == ch && k >= n && len(bytes.TrimSpace(rest)) == 0:
			n = 0
			if q >= p {
				return next, true
			}
		}
		q = next
	}
	return -1, n > 0
}

// fenceLine reads a line as a fence: its character and length (0 when it
// is no fence), and what follows.
func fenceLine(line []byte) (c byte, n int, rest []byte) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i == len(line) || line[i] != '`' && line[i] != '~' {
		return 0, 0, nil
	}
	c = line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	if j-i < 3 {
		return 0, 0, nil
	}
	return c, j - i, line[j:]
}

// pastFence moves p, a line start of out, to after the closing fence of
// the fenced code block it lies inside (fenceAround); p as it is when it
// lies in none, or in one never closed (the block is the file's own
// structure, and past its end is nowhere).
func pastFence(out []byte, p int) int {
	if end, open := fenceAround(out, p); open && end >= 0 {
		return end
	}
	return p
}

// splice inserts lines at p (a line start or the end of out). A last line
// without its newline gets the file's line ending, as does a file that ends
// without one where the lines go after it.
func splice(out []byte, p int, lines []string) []byte {
	eol := "\n"
	if bytes.Contains(out, []byte("\r\n")) {
		eol = "\r\n"
	}
	var ins strings.Builder
	if p == len(out) && p > 0 && out[p-1] != '\n' {
		ins.WriteString(eol)
	}
	for _, l := range lines {
		ins.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			ins.WriteString(eol)
		}
	}
	res := make([]byte, 0, len(out)+ins.Len())
	res = append(res, out[:p]...)
	res = append(res, ins.String()...)
	return append(res, out[p:]...)
}

// GraphLoss is an edit of one side that a graph merge could not keep:
// Earlier says whose (the version recorded earlier, else the later one),
// What names it.
type GraphLoss struct {
	Earlier bool
	What    string
}

// MergeGraph merges two versions of an MCP memory graph file that grew apart
// from base, by entity and relation: the result is the version recorded
// later, with what the earlier one did since base applied to it. An entity
// the earlier side added goes in as its line; observations it added are
// appended to the entity; an entity, observation or relation it deleted is
// deleted (and one the later side deleted stays deleted). An entity or
// relation line only the earlier side changed is taken whole; one both
// changed keeps the later line's bytes with the earlier side's changes to
// other members (entityType, createdAt, a relation's note, a fork's own
// fields) applied where the later side left the member as it was. Every
// other line (a second line of an entity or relation, which the server does
// not read; a blank line; a line that is neither) is merged as a line: one
// the earlier side added goes in after the line it followed, one it deleted
// goes. Every line no change touches keeps its bytes, and the result ends
// its lines as the later version does (when that uses one ending).
//
// What the merge cannot keep it names in lost: a member both sides changed
// to different values (the later value stays); the edits of an entity or
// relation the other side deleted (the deletion wins); and a relation one
// side added to an entity the other deleted (dropped, as the server's
// delete_entities drops an entity's relations).
//
// The observations strata owns of the entities it keeps ("type: APEX",
// "phase: …", "updated: …" of workflow-state; graph.Own) are not unioned:
// they are one side's, as a whole — as the L1 file they mirror is one
// side's. MergeGraph takes the side that changed them since base, and
// when both did, the one whose "updated:" is later (the later side on a
// tie or without one); MergeGraphFollow is told the side instead.
func MergeGraph(base, earlier, later []byte) (out []byte, lost []GraphLoss) {
	return MergeGraphFollow(base, earlier, later, nil)
}

// MergeGraphFollow is MergeGraph, with the side whose own observations
// each entity strata keeps takes given by earlierOwn (entity name → true
// for the earlier side's, false for the later's): the side whose version
// of the L1 file the sync took, so that L3 says what L1 says. A name it
// does not hold is decided as MergeGraph decides it.
func MergeGraphFollow(base, earlier, later []byte, earlierOwn map[string]bool) (out []byte, lost []GraphLoss) {
	// each file parsed once; the later one's lines become the result
	bD, eD, doc := graph.NewDoc(base), graph.NewDoc(earlier), graph.NewDoc(later)
	b, e, l := bD.Graph(), eD.Graph(), doc.Graph()
	bE, lE := entities(b), entities(l)
	bL, eL, lL := bD.EntityLines(), eD.EntityLines(), doc.EntityLines()
	bR, eR, lR := bD.RelationLines(), eD.RelationLines(), doc.RelationLines()
	bI, eI, lI := bD.Lines(), eD.Lines(), doc.Lines()
	bK, eK, lK := byKey(bI), byKey(eI), byKey(lI)
	named := map[GraphLoss]bool{}
	lose := func(earlierSide bool, what string) {
		if l := (GraphLoss{earlierSide, what}); !named[l] {
			named[l] = true
			lost = append(lost, l)
		}
	}
	var added [][]byte           // entity lines new on the earlier side, in its order
	deleted := map[string]bool{} // entities of base one side deleted
	seen := map[string]bool{}
	for _, en := range e.Entities {
		if seen[en.Name] {
			continue // a second line of a name: merged as a line, below
		}
		seen[en.Name] = true
		be, inBase := bE[en.Name]
		le, inLater := lE[en.Name]
		switch {
		case !inLater && inBase:
			deleted[en.Name] = true
			if edited(eK, bK, graph.EntityKey(en.Name)) {
				lose(true, entityDeleted(en.Name))
			}
			continue
		case !inLater:
			// new on the earlier side; added after the loop, where each
			// would go one by one (after the last entity line): no line the
			// loop replaces is one of them
			added = append(added, eL[en.Name])
			continue
		}
		line := lL[en.Name]
		switch {
		case graph.SameLine(eL[en.Name], lL[en.Name]):
		case inBase && graph.SameLine(eL[en.Name], bL[en.Name]): // the earlier side left it
		case inBase && graph.SameLine(lL[en.Name], bL[en.Name]):
			line = eL[en.Name] // only the earlier side changed it
		default:
			var ml []graph.MemberLoss
			line, ml = graph.MergeEntityLine(bL[en.Name], eL[en.Name], lL[en.Name], inBase, mergeObservations(be.Observations, en.Observations, le.Observations, inBase))
			for _, m := range ml {
				lose(true, memberText(fmt.Sprintf("entity %q", en.Name), m))
			}
		}
		if graph.Keeps(en.Name) {
			own := graph.Own(le)
			if ownFromEarlier(be, en, le, inBase, earlierOwn) {
				own = graph.Own(en)
			}
			line = graph.WithOwn(line, en.Name, own)
		}
		if !bytes.Equal(line, lL[en.Name]) {
			doc.SetEntityLine(en.Name, line)
		}
	}
	doc.AddEntityLines(added)
	var drop []string
	for _, be := range b.Entities {
		if _, ok := eL[be.Name]; ok {
			continue
		}
		if _, ok := lL[be.Name]; !ok {
			continue
		}
		if !deleted[be.Name] {
			drop = append(drop, be.Name)
			deleted[be.Name] = true
			if edited(lK, bK, graph.EntityKey(be.Name)) {
				lose(false, entityDeleted(be.Name))
			}
		}
	}
	if len(drop) > 0 {
		doc.DropEntities(drop)
	}
	dropped := map[string]bool{}
	for _, n := range drop {
		dropped[n] = true
	}
	dangling := func(r graph.Relation) string {
		for _, n := range []string{r.From, r.To} {
			if deleted[n] {
				return n
			}
		}
		return ""
	}
	relName := func(r graph.Relation) string {
		return fmt.Sprintf("relation %q -> %q (%s)", r.From, r.To, r.RelationType)
	}
	relDeleted := func(r graph.Relation) string {
		return relName(r) + " deleted on the other side: its edits dropped"
	}
	relText := func(r graph.Relation, gone string) string {
		return fmt.Sprintf("%s dropped: %q deleted on the other side", relName(r), gone)
	}
	var addR [][]byte
	var dropR []graph.Relation
	droppedR := map[graph.Relation]bool{}
	for _, r := range e.Relations {
		el := eR[r]
		if el == nil {
			continue // a second line of the relation: merged as a line, below
		}
		eR[r] = nil
		bl, inBase := bR[r]
		ll, inLater := lR[r]
		switch {
		case inBase && !inLater: // the later side deleted it
			if edited(eK, bK, graph.RelationKey(r)) {
				lose(true, relDeleted(r))
			}
		case !inLater: // new on the earlier side
			if gone := dangling(r); gone != "" {
				lose(true, relText(r, gone))
				continue
			}
			addR = append(addR, el)
		case graph.SameLine(el, ll):
		case inBase && graph.SameLine(el, bl): // the earlier side left it
		case inBase && graph.SameLine(ll, bl): // only the earlier side changed it
			doc.SetRelationLine(r, el)
		default:
			line, ml := graph.MergeRelationLine(bl, el, ll, inBase)
			doc.SetRelationLine(r, line)
			for _, m := range ml {
				lose(true, memberText(relName(r), m))
			}
		}
	}
	for _, r := range b.Relations {
		if _, inEarlier := eR[r]; !inEarlier && hasRel(lR, r) && !droppedR[r] {
			dropR = append(dropR, r)
			droppedR[r] = true
			if edited(lK, bK, graph.RelationKey(r)) {
				lose(false, relDeleted(r))
			}
		}
	}
	for _, r := range l.Relations {
		if hasRel(bR, r) || hasRel(eR, r) || droppedR[r] {
			continue
		}
		if gone := dangling(r); gone != "" && dropped[gone] {
			dropR = append(dropR, r)
			droppedR[r] = true
			lose(false, relText(r, gone))
		}
	}
	if len(dropR) > 0 {
		doc.DropRelations(dropR)
	}
	doc.AppendLines(addR)
	// the other lines, by their bytes (a "\r" before the "\n" aside)
	gone := func(li graph.LineInfo) string { // why an earlier line of a key cannot go in
		switch {
		case li.Name != "":
			if _, inBase := bE[li.Name]; inBase && deleted[li.Name] {
				return entityDeleted(li.Name)
			}
		case li.Relation != nil:
			r := *li.Relation
			if n := dangling(r); n != "" {
				return relText(r, n)
			}
			if hasRel(bR, r) && !hasRel(lR, r) {
				return relDeleted(r)
			}
		}
		return ""
	}
	mergeOtherLines(bI, eI, lI, doc, gone, lose)
	out = doc.Bytes()
	end := graph.EndingOf(later)
	if end == graph.EndingNone {
		end = graph.EndingOf(earlier)
	}
	return graph.WithEnding(out, end, bytes.HasSuffix(later, []byte("\r"))), lost
}

// ownFromEarlier reports whether an entity strata keeps, present on both
// sides, takes the earlier side's own observations (graph.Own): as
// earlierOwn says when it names the entity; else the side that changed them
// since base when only one did; else the one whose "updated:" is later,
// the later side on a tie or when either lacks one.
func ownFromEarlier(base, earlier, later graph.Entity, inBase bool, earlierOwn map[string]bool) bool {
	if e, ok := earlierOwn[earlier.Name]; ok {
		return e
	}
	eo, lo := graph.Own(earlier), graph.Own(later)
	if slices.Equal(eo, lo) {
		return false
	}
	if inBase {
		bo := graph.Own(base)
		switch {
		case slices.Equal(eo, bo):
			return false
		case slices.Equal(lo, bo):
			return true
		}
	}
	et, eok := earlier.Updated()
	lt, lok := later.Updated()
	return eok && lok && et.After(lt)
}

// hasRel reports whether a side's relation lines (RelationLines) hold r.
func hasRel(m map[graph.Relation][]byte, r graph.Relation) bool {
	_, ok := m[r]
	return ok
}

// mergeObservations is the observations of an entity both sides changed:
// the later side's, then each the earlier side added (not in base), less
// each of base the earlier side deleted. Sets, not searches: an entity can
// hold many thousands.
func mergeObservations(base, earlier, later []string, inBase bool) []string {
	set := func(ss []string) map[string]bool {
		m := make(map[string]bool, len(ss))
		for _, s := range ss {
			m[s] = true
		}
		return m
	}
	inB, inE := set(base), set(earlier)
	obs := slices.Clone(later)
	have := set(obs)
	for _, o := range earlier {
		if !have[o] && (!inBase || !inB[o]) {
			obs = append(obs, o)
			have[o] = true
		}
	}
	if inBase {
		obs = slices.DeleteFunc(obs, func(o string) bool { return inB[o] && !inE[o] })
	}
	return obs
}

// entityDeleted names the dropped edits of an entity the other side deleted.
func entityDeleted(name string) string {
	return fmt.Sprintf("entity %q deleted on the other side: its edits dropped", name)
}

// memberText names a member of what (an entity or relation) that the merge
// could not keep.
func memberText(what string, m graph.MemberLoss) string {
	switch {
	case m.Kept == "":
		return fmt.Sprintf("%s: %s %s lost to its removal", what, m.Key, clip(m.Earlier))
	case m.Earlier == "":
		return fmt.Sprintf("%s: removal of %s lost to %s", what, m.Key, clip(m.Kept))
	}
	return fmt.Sprintf("%s: %s %s lost to %s", what, m.Key, clip(m.Earlier), clip(m.Kept))
}

// byKey groups a file's lines by their Key, in order.
func byKey(ls []graph.LineInfo) map[string][]graph.LineInfo {
	m := map[string][]graph.LineInfo{}
	for _, li := range ls {
		if li.Key != "" {
			m[li.Key] = append(m[li.Key], li)
		}
	}
	return m
}

// edited reports whether side changed key's lines since base (both
// grouped by byKey): its first line holds other members or values than
// base's, or it has a line of key that base does not.
func edited(side, base map[string][]graph.LineInfo, key string) bool {
	var sf, bf []byte
	have := map[string]bool{}
	for _, li := range base[key] {
		have[string(trimCR(li.Text))] = true
		if li.First {
			bf = li.Text
		}
	}
	for _, li := range side[key] {
		if li.First {
			sf = li.Text
		}
		if !have[string(trimCR(li.Text))] {
			return true
		}
	}
	return !graph.SameLine(sf, bf)
}

// trimCR is a line without the "\r"s before its "\n": lines compare so.
func trimCR(t []byte) []byte { return bytes.TrimRight(t, "\r") }

// placeBudget bounds the work of placing the lines mergeOtherLines adds:
// each is placed by a search of the file (and goes in by moving the lines
// after it), so placing k lines in n costs k*n. Past this many line visits
// the rest of the added lines go at the end, where nothing need be
// searched: every line is still kept, and a hostile side's many thousands
// of lines cannot make a sync take hours.
var placeBudget = 1 << 24

// mergeOtherLines merges, line by line, the lines of the graph file that
// are not the first of an entity or relation (those MergeGraph merged by
// their members): a line the earlier side added that doc lacks goes in
// after the line it followed in earlier (a second line of an entity or
// relation never before its first), else at the end, unless gone says why
// it cannot (then that is named, through lose); a line the earlier side
// deleted that doc still holds (not as a first line) goes. Lines compare
// without the "\r"s before their "\n".
func mergeOtherLines(bI, eI, lI []graph.LineInfo, doc *graph.Doc, gone func(graph.LineInfo) string, lose func(bool, string)) {
	norm := func(t []byte) string { return string(trimCR(t)) }
	count := func(ls []graph.LineInfo) map[string]int {
		c := map[string]int{}
		for _, li := range ls {
			c[norm(li.Text)]++
		}
		return c
	}
	cB, cE, cL := count(bI), count(eI), count(lI)
	// deleted first (the texts are not those added): of each text, the
	// last copies that are not a first line, removed together from the
	// last line up (a deletion at the end hands "no final newline" to the
	// line before, which must not be an added blank line)
	cur := doc.Lines()
	at := map[string][]int{} // the lines of each text that are not a first line
	for j, c := range cur {
		if !c.First {
			at[norm(c.Text)] = append(at[norm(c.Text)], j)
		}
	}
	var del []int
	for t, n := range cB {
		k := (n - cE[t]) - max(0, n-cL[t]) // deleted on the earlier side, not on the later
		if js := at[t]; k > 0 {
			del = append(del, js[max(0, len(js)-k):]...)
		}
	}
	if len(del) > 0 {
		doc.DeleteLines(del)
		cur = doc.Lines()
	}
	// added: how many copies of a line the earlier side added that the later
	// side did not add as well
	add := map[string]int{}
	for t, n := range cE {
		if k := (n - cB[t]) - max(0, cL[t]-cB[t]); k > 0 {
			add[t] = k
		}
	}
	if len(add) == 0 {
		return
	}
	anchor := make([]int, len(eI)) // the nearest non-blank line before each, -1 for none
	a := -1
	for i, li := range eI {
		anchor[i] = a
		if len(bytes.TrimSpace(li.Text)) > 0 {
			a = i
		}
	}
	chain := doc.Chain()
	defer chain.Close()
	n := len(cur)
	visits := 0
	for i, li := range eI {
		t := norm(li.Text)
		if li.First || add[t] == 0 {
			continue
		}
		add[t]--
		if why := gone(li); why != "" {
			lose(true, why)
			continue
		}
		var at *graph.Node // the line it goes before; nil: at the end
		if visits < placeBudget {
			visits += n + i - anchor[i]
			at = place(chain, n, eI, i, anchor[i])
		}
		if at == nil && n > 0 && len(bytes.TrimSpace(li.Text)) == 0 && chain.Unterminated() {
			// a blank line cannot be the last of a file without a final
			// newline (it would be no line at all): it goes before that one
			at = chain.Last()
		}
		chain.InsertBefore(at, li.Text)
		n++
	}
}

// place finds the line before which earlier's line i goes among chain's n
// lines (nil: at the end): after the line at anchor (the nearest non-blank
// line before it in earlier; the first line of an entity or relation is
// found by its key, as the merge may have changed it) and the lines that
// followed that one in earlier and follow it in chain too; first of all
// without an anchor; at the end when chain lacks it. A line of a key never
// goes before the key's first line (the one the server reads): then it goes
// after the key's last.
func place(chain *graph.Chain, n int, eI []graph.LineInfo, i, anchor int) *graph.Node {
	pos, at := n, (*graph.Node)(nil) // where it goes, and the line there
	if anchor < 0 {
		pos, at = 0, chain.Front()
	}
	key := eI[i].Key
	first := -1              // the index of the key's first line
	var afterKey *graph.Node // the line after the key's last
	found := anchor < 0
	j := 0
	for c := chain.Front(); c != nil; c, j = c.Next(), j+1 {
		if key != "" && c.Info.Key == key {
			if first < 0 {
				first = j
			}
			afterKey = c.Next()
		}
		if found {
			continue
		}
		if an := eI[anchor]; bytes.Equal(trimCR(c.Info.Text), trimCR(an.Text)) || an.First && c.Info.First && c.Info.Key == an.Key {
			found = true
			pos, at = j+1, c.Next()
			for k := anchor + 1; k < i && at != nil && bytes.Equal(trimCR(at.Info.Text), trimCR(eI[k].Text)); k++ {
				pos, at = pos+1, at.Next()
			}
		}
	}
	if first >= 0 && pos <= first {
		return afterKey
	}
	return at
}

// clip shortens a JSON value for a report line.
func clip(v string) string {
	if len(v) > 60 {
		return strings.ToValidUTF8(v[:57], "") + "..."
	}
	return v
}

// entities maps each name to its first entity, as the server's tools find it.
func entities(g *graph.Graph) map[string]graph.Entity {
	m := make(map[string]graph.Entity, len(g.Entities))
	for _, e := range g.Entities {
		if _, ok := m[e.Name]; !ok {
			m[e.Name] = e
		}
	}
	return m
}
