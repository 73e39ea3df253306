package semantic

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

func ver(commit string, src state.Source, content string) Version {
	t := time.Date(2026, 11, 22, 9, len(commit), 0, 0, time.UTC)
	v := Version{Entry: state.Entry{Commit: commit, Time: t, Source: src}}
	if content != "" {
		v.Content = []byte(content)
	}
	return v
}

func TestBlameTreeRestore(t *testing.T) {
	vs := []Version{
		ver("a", state.SourceRecord, `{"phase":"plan","n":1}`),
		ver("bb", state.SourceRecord, `{"n":1, "phase":"implement"}`),
		ver("ccc", state.SourceRestore, `{"phase":"plan","n":1}`),
	}
	out, err := Blame("x.json", KindTree, vs, "")
	require.NoError(t, err)
	require.Equal(t, []BlameLine{
		{Key: "/n", Value: "1", Origin: Origin{Commit: "a", Time: vs[0].Entry.Time, Source: state.SourceRecord}},
		{Key: "/phase", Value: `"plan"`, Origin: Origin{Commit: "a", Time: vs[0].Entry.Time, Source: state.SourceRecord, Restored: true, RestoredBy: "ccc"}},
	}, out)
}

func TestBlameLines(t *testing.T) {
	vs := []Version{
		ver("a", state.SourceRecord, "x\ny\n"),
		ver("bb", state.SourceRecord, "x\nnew\ny\n"),
	}
	out, err := Blame("MEMORY.md", KindMemory, vs, "")
	require.NoError(t, err)
	got := []string{}
	for _, l := range out {
		got = append(got, l.Commit+":"+l.Value)
	}
	require.Equal(t, []string{"a:x", "bb:new", "a:y"}, got)
}

func TestDiffTree(t *testing.T) {
	a := `{"phase":"plan","phases":[{"n":1},{"n":2}],"enforcement":{"blocking":false}}`
	b := "phases:\n  - {n: 1}\n  - {n: 2}\n  - {n: 3}\nphase: implement\n"
	ch, err := Diff("x.yaml", KindTree, []byte(a), []byte(b))
	require.NoError(t, err)
	var got []string
	for _, c := range ch {
		got = append(got, c.String())
	}
	require.Equal(t, []string{"- /enforcement", `/phase: "plan" → "implement"`, "+ /phases/2"}, got)
	same, err := Diff("x.json", KindTree, []byte(`{"a":1,"b":[1,2]}`), []byte("{ \"b\": [1, 2],\n  \"a\": 1 }"))
	require.NoError(t, err)
	require.Empty(t, same)
}

func TestDiffMemoryAndGraph(t *testing.T) {
	ch := diffItems(memoryGroups([]byte("# M\n## A\n- x\n## B\n- y\n")), memoryGroups([]byte("# M\n## A\n- x\n- z\n## C\n")))
	require.Equal(t, []Change{{Op: "-", Key: "## M > B"}, {Op: "~", Key: "## M > A", Added: []string{"- z"}}, {Op: "+", Key: "## M > C"}}, ch)
	g := diffItems(graphGroups([]byte(`{"type":"entity","name":"p","observations":["a"]}`)), graphGroups([]byte(`{"type":"entity","name":"p","observations":["b"]}`)))
	require.Equal(t, []Change{{Op: "~", Key: "entity p", Added: []string{"b"}, Removed: []string{"a"}}}, g)
}
