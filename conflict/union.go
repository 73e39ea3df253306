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
// the result is the version recorded later, byte for byte, with the runs of
// lines the earlier version added to base inserted where they belong. A run
// goes after the line it followed in the earlier version, found within the
// same section (goldmark locates the sections and their list items; an
// anchor inside a list item means after the whole item); when that line is
// gone, at the end of the same section; when the section is gone, at the
// end of the file. Lines the later version already holds are not added
// twice, and runs keep their order, so both sides' new lines are present.
func MergeMemory(base, earlier, later []byte) ([]byte, error) {
	runs := textdiff.Added(base, earlier)
	if len(runs) == 0 {
		return later, nil
	}
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
	for _, r := range runs {
		add := newLines(r.Lines, out)
		if add == nil {
			continue
		}
		anchor, section := "", []string(nil)
		if r.At > 0 {
			anchor = strings.TrimRight(lines[r.At-1], "\r\n")
			section = sectionPath(ed, offs[r.At-1])
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

// newLines drops from a run the lines out already holds (blank lines aside);
// nil when nothing new is left.
func newLines(run []string, out []byte) []string {
	have := map[string]bool{}
	for _, l := range textdiff.Lines(out) {
		have[strings.TrimRight(l, "\r\n")] = true
	}
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
func MergeGraph(base, earlier, later []byte) (out []byte, lost []GraphLoss) {
	b, e, l := graph.Parse(base), graph.Parse(earlier), graph.Parse(later)
	bE, lE := entities(b), entities(l)
	bL, eL, lL := graph.EntityLines(base), graph.EntityLines(earlier), graph.EntityLines(later)
	bI, eI, lI := graph.Lines(base), graph.Lines(earlier), graph.Lines(later)
	named := map[GraphLoss]bool{}
	lose := func(earlierSide bool, what string) {
		if l := (GraphLoss{earlierSide, what}); !named[l] {
			named[l] = true
			lost = append(lost, l)
		}
	}
	out = later
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
			if edited(eI, bI, graph.EntityKey(en.Name)) {
				lose(true, entityDeleted(en.Name))
			}
			continue
		case !inLater:
			out = graph.InsertEntityLine(out, eL[en.Name]) // new on the earlier side
			continue
		}
		switch {
		case graph.SameLine(eL[en.Name], lL[en.Name]):
			continue
		case inBase && graph.SameLine(eL[en.Name], bL[en.Name]):
			continue // the earlier side left it
		case inBase && graph.SameLine(lL[en.Name], bL[en.Name]):
			out = graph.ReplaceEntityLine(out, en.Name, eL[en.Name]) // only the earlier side changed it
			continue
		}
		obs := slices.Clone(le.Observations)
		for _, o := range en.Observations {
			if !slices.Contains(obs, o) && (!inBase || !slices.Contains(be.Observations, o)) {
				obs = append(obs, o)
			}
		}
		if inBase {
			obs = slices.DeleteFunc(obs, func(o string) bool {
				return slices.Contains(be.Observations, o) && !slices.Contains(en.Observations, o)
			})
		}
		line, ml := graph.MergeEntityLine(bL[en.Name], eL[en.Name], lL[en.Name], inBase, obs)
		out = graph.ReplaceEntityLine(out, en.Name, line)
		for _, m := range ml {
			lose(true, memberText(fmt.Sprintf("entity %q", en.Name), m))
		}
	}
	var drop []string
	for _, be := range b.Entities {
		if _, ok := eL[be.Name]; ok {
			continue
		}
		if _, ok := lL[be.Name]; !ok {
			continue
		}
		if !slices.Contains(drop, be.Name) {
			drop = append(drop, be.Name)
			deleted[be.Name] = true
			if edited(lI, bI, graph.EntityKey(be.Name)) {
				lose(false, entityDeleted(be.Name))
			}
		}
	}
	if len(drop) > 0 {
		out = graph.DropEntities(out, drop)
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
	bR, eR, lR := graph.RelationLines(base), graph.RelationLines(earlier), graph.RelationLines(later)
	var addR [][]byte
	var dropR []graph.Relation
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
			if edited(eI, bI, graph.RelationKey(r)) {
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
			out = graph.ReplaceRelationLine(out, r, el)
		default:
			line, ml := graph.MergeRelationLine(bl, el, ll, inBase)
			out = graph.ReplaceRelationLine(out, r, line)
			for _, m := range ml {
				lose(true, memberText(relName(r), m))
			}
		}
	}
	for _, r := range b.Relations {
		if _, inEarlier := eR[r]; !inEarlier && slices.Contains(l.Relations, r) && !slices.Contains(dropR, r) {
			dropR = append(dropR, r)
			if edited(lI, bI, graph.RelationKey(r)) {
				lose(false, relDeleted(r))
			}
		}
	}
	for _, r := range l.Relations {
		if slices.Contains(b.Relations, r) || slices.Contains(e.Relations, r) || slices.Contains(dropR, r) {
			continue
		}
		if gone := dangling(r); gone != "" && slices.Contains(drop, gone) {
			dropR = append(dropR, r)
			lose(false, relText(r, gone))
		}
	}
	if len(dropR) > 0 {
		out = graph.DropRelations(out, dropR)
	}
	if len(addR) > 0 {
		out = graph.AddLines(out, addR)
	}
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
			if slices.Contains(b.Relations, r) && !slices.Contains(l.Relations, r) {
				return relDeleted(r)
			}
		}
		return ""
	}
	out = mergeOtherLines(bI, eI, lI, out, gone, lose)
	end := graph.EndingOf(later)
	if end == graph.EndingNone {
		end = graph.EndingOf(earlier)
	}
	return graph.WithEnding(out, end, bytes.HasSuffix(later, []byte("\r"))), lost
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

// edited reports whether side changed key's lines since base: its first
// line holds other members or values than base's, or it has a line of key
// that base does not.
func edited(side, base []graph.LineInfo, key string) bool {
	var sf, bf []byte
	have := map[string]bool{}
	for _, li := range base {
		if li.Key == key {
			have[string(bytes.TrimRight(li.Text, "\r"))] = true
			if li.First {
				bf = li.Text
			}
		}
	}
	for _, li := range side {
		if li.Key != key {
			continue
		}
		if li.First {
			sf = li.Text
		}
		if !have[string(bytes.TrimRight(li.Text, "\r"))] {
			return true
		}
	}
	return !graph.SameLine(sf, bf)
}

// mergeOtherLines merges, line by line, the lines of the graph file that
// are not the first of an entity or relation (those MergeGraph merged by
// their members): a line the earlier side added that out lacks goes in
// after the line it followed in earlier (a second line of an entity or
// relation never before its first), else at the end, unless gone says why
// it cannot (then that is named, through lose); a line the earlier side
// deleted that out still holds (not as a first line) goes. Lines compare
// without the "\r"s before their "\n".
func mergeOtherLines(bI, eI, lI []graph.LineInfo, out []byte, gone func(graph.LineInfo) string, lose func(bool, string)) []byte {
	norm := func(t []byte) string { return string(bytes.TrimRight(t, "\r")) }
	count := func(ls []graph.LineInfo) map[string]int {
		c := map[string]int{}
		for _, li := range ls {
			c[norm(li.Text)]++
		}
		return c
	}
	cB, cE, cL := count(bI), count(eI), count(lI)
	// deleted first (the texts are not those added): a deletion at the end
	// hands "no final newline" to the line before, which must not be an
	// added blank line
	for t, n := range cB {
		k := (n - cE[t]) - max(0, n-cL[t]) // deleted on the earlier side, not on the later
		for ; k > 0; k-- {
			cur := graph.Lines(out)
			j := len(cur) - 1
			for j >= 0 && (cur[j].First || norm(cur[j].Text) != t) {
				j--
			}
			if j < 0 {
				break
			}
			out = graph.DeleteLineAt(out, j)
		}
	}
	// added: how many copies of a line the earlier side added that the later
	// side did not add as well
	add := map[string]int{}
	for t, n := range cE {
		if k := (n - cB[t]) - max(0, cL[t]-cB[t]); k > 0 {
			add[t] = k
		}
	}
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
		cur := graph.Lines(out)
		at := len(cur)
		// after the nearest non-blank line before it in earlier (the first
		// line of an entity or relation found by its key, as the merge may
		// have changed it), and the lines that followed that one there and
		// follow it in out too
		a := i - 1
		for a >= 0 && len(bytes.TrimSpace(eI[a].Text)) == 0 {
			a--
		}
		if a < 0 {
			at = 0
		} else {
			for j, c := range cur {
				if norm(c.Text) == norm(eI[a].Text) || eI[a].First && c.First && c.Key == eI[a].Key {
					at = j + 1
					for k := a + 1; k < i && at < len(cur) && norm(cur[at].Text) == norm(eI[k].Text); k++ {
						at++
					}
					break
				}
			}
		}
		if li.Key != "" { // never before the line the server reads
			first := -1
			last := -1
			for j, c := range cur {
				if c.Key == li.Key {
					if first < 0 {
						first = j
					}
					last = j
				}
			}
			if first >= 0 && at <= first {
				at = last + 1
			}
		}
		if at == len(cur) && at > 0 && len(bytes.TrimSpace(li.Text)) == 0 && len(out) > 0 && out[len(out)-1] != '\n' {
			// a blank line cannot be the last of a file without a final
			// newline (it would be no line at all): it goes before that one
			at--
		}
		out = graph.InsertLineAt(out, at, li.Text)
	}
	return out
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
