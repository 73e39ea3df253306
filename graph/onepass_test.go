package graph

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigGraph is a graph file of n entity lines, a relation line, and no
// final newline, over 2 MB for n = 25 000 (past the parse cache's bound).
func bigGraph(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"type":"entity","name":"entity-number-%06d","entityType":"thing","observations":["observation %06d of a graph"]}`+"\n", i, i)
	}
	b.WriteString(`{"type":"relation","from":"entity-number-000001","to":"entity-number-000002","relationType":"r"}`)
	return b.Bytes()
}

// An upsert parses each line of the file once, however many entities it
// writes and removes: it used to parse the whole file once per entity and
// per name removed, through a cache that a file over 2 MB emptied at each
// pass (attack35b H2: 7 s a step at 40 000 entities). Counted, not timed:
// the whole protocol (File.UpsertRemove, with its re-read and settle
// rounds) may parse the lines it wrote once more at most.
func TestUpsertParsesEachLineOnce(t *testing.T) {
	const n = 25000
	data := bigGraph(n)
	require.Greater(t, len(data), maxCacheBytes)
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	ents := []Entity{
		{Name: "entity-number-000010", EntityType: "t", Observations: []string{"phase: a"}},
		{Name: "workflow-state", EntityType: "workflow_state", Observations: []string{"phase: b"}},
		{Name: "initiative-checkpoint", EntityType: "initiative", Observations: []string{"status: c"}},
		{Name: "entity-number-020000", EntityType: "t", Observations: []string{"phase: d"}},
	}
	remove := []string{"entity-number-000500", "entity-number-000600", "nobody"}
	parses := 0
	onParse = func() { parses++ }
	defer func() { onParse = nil }()

	out, changed, err := upsertRemove(data, ents, remove, nil)
	require.NoError(t, err)
	require.True(t, changed)
	assert.LessOrEqual(t, parses, n+1+len(ents), "lines parsed by one edit of %d lines", n+1)

	parses = 0
	changed, err = File{Name: path}.UpsertRemove(ents, remove)
	require.NoError(t, err)
	require.True(t, changed)
	assert.LessOrEqual(t, parses, n+1+len(ents), "lines parsed by the protocol's edit of %d lines", n+1)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(out), string(got))
}

// seqUpsertLines and seqRemoveLines are upsertLines and removeLines as they
// were before upsertRemove: one pass over the file per entity and per name.
// The one-pass edit must give the same bytes, changed flag and errors.
func seqUpsertLines(data []byte, ents []Entity) (out []byte, changed bool, err error) {
	ls := splitLines(data)
	var errs []error
	for _, e := range ents {
		first, lastEntity, firstRelation := -1, -1, -1
		for i, l := range ls {
			p := parseLine(l.text)
			switch p.kind {
			case "entity":
				lastEntity = i
				if p.name == e.Name && p.named && first < 0 {
					first = i
					text, ok, err := upsertLine(l.text, e)
					if oe := (*ObservationsError)(nil); errors.As(err, &oe) {
						oe.Line = i + 1
						errs = append(errs, oe)
					} else if ok {
						ls[i].text = text
						changed = true
					}
				}
			case "relation":
				if firstRelation < 0 {
					firstRelation = i
				}
			}
		}
		if first >= 0 {
			continue
		}
		ls = insertLine(ls, newEntityAt(len(ls), lastEntity, firstRelation), renderEntity(e))
		changed = true
	}
	if !changed {
		return data, false, errors.Join(errs...)
	}
	return joinLines(ls), true, errors.Join(errs...)
}

func seqRemoveLines(data []byte, names []string, gone map[string]string) ([]byte, bool) {
	ls := splitLines(data)
	var drop []int
	for _, n := range names {
		was, again := gone[n]
		for i := range ls {
			p := parseLine(ls[i].text)
			if p.kind != "entity" || !p.named || p.name != n {
				continue
			}
			if again && string(ls[i].text) != was {
				continue
			}
			drop = append(drop, i)
			if gone != nil {
				gone[n] = string(ls[i].text)
			}
			break
		}
	}
	if len(drop) == 0 {
		return data, false
	}
	slices.Sort(drop)
	drop = slices.Compact(drop)
	for i := len(drop) - 1; i >= 0; i-- {
		ls = deleteLine(ls, drop[i])
	}
	return joinLines(ls), true
}

func FuzzUpsertRemoveOnePass(f *testing.F) {
	f.Add([]byte(""), "a", "b", "c", "x", true)
	f.Add([]byte(oursLine+"\r\n"+`{"type":"entity","name":"a","entityType":"t","observations":[]}`+"\r\n  \n"), "workflow-state", "a", "a", "p: q", false)
	f.Add([]byte(`{"type":"entity","name":"a","entityType":"t","observations":"s"}`+"\n"+`{"type":"entity","name":"a","entityType":"t","observations":[]}`), "a", "b", "a", "", true)
	f.Add([]byte(`{"type":"relation","from":"a","to":"b","relationType":"r"}`+"\n"+`{"type":"entity","name":"b"}`), "b", "b", "c", "\u2028", false)
	f.Add([]byte(`{"type":"entity","name":"c","entityType":"t","observations":[]}`+"\n"+`{"type":"entity","name":"c","entityType":"t","observations":[]}`+"\n\n"), "d", "e", "c", "o", true)
	f.Fuzz(func(t *testing.T, data []byte, n1, n2, rm, obs string, withGone bool) {
		if !utf8.ValidString(n1) || !utf8.ValidString(n2) || !utf8.ValidString(obs) {
			t.Skip()
		}
		ents := []Entity{
			{Name: n1, EntityType: "t", Observations: []string{obs}},
			{Name: n2, EntityType: "u", Observations: []string{"k: " + obs}},
		}
		remove := []string{rm, n2, rm}
		var g1, g2 map[string]string
		if withGone {
			g1, g2 = map[string]string{}, map[string]string{}
		}
		for round := 0; round < 2; round++ { // again on its own output, as the protocol does
			mid, removed := seqRemoveLines(data, remove, g1)
			want, upserted, wantErr := seqUpsertLines(mid, ents)
			got, changed, gotErr := upsertRemove(data, ents, remove, g2)
			if string(got) != string(want) || changed != (removed || upserted) || errText(gotErr) != errText(wantErr) {
				t.Fatalf("round %d of %q:\none pass   %q %v %v\none by one %q %v %v", round, data, got, changed, gotErr, want, removed || upserted, wantErr)
			}
			if len(g1) != len(g2) {
				t.Fatalf("gone differs: %q %q", g1, g2)
			}
			for k, v := range g1 {
				if g2[k] != v {
					t.Fatalf("gone differs: %q %q", g1, g2)
				}
			}
			data = got
		}
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
