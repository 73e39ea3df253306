package graph

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/state"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A graph file over File.Max (max_size) is neither read nor written: strata
// records no version of it, before the edit or after (attack35b H2). The
// error is L3 unavailable, and says the size.
func TestUpsertRefusesAFileOverMax(t *testing.T) {
	data := bigGraph(100)
	for _, tree := range []bool{false, true} {
		t.Run(fmt.Sprint("door=", tree), func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "memory.jsonl")
			require.NoError(t, os.WriteFile(path, data, 0o600))
			f := File{Name: path, Max: int64(len(data)) - 1}
			if tree {
				f.Tree, f.Rel = state.Tree{Root: root, Real: root}, "memory.jsonl"
			}
			reads := 0
			beforeRead = func() { reads++ }
			defer func() { beforeRead = nil }()
			changed, err := f.UpsertRemove([]Entity{ours}, []string{"entity-number-000001"})
			assert.False(t, changed)
			require.ErrorIs(t, err, ErrUnavailable)
			require.ErrorIs(t, err, state.ErrTooLarge)
			assert.Contains(t, err.Error(), fmt.Sprintf("file is %d bytes, larger than max_size %d", len(data), len(data)-1))
			assert.Zero(t, reads, "the file was read")
			got, _ := os.ReadFile(path)
			assert.Equal(t, string(data), string(got))
			left, _ := filepath.Glob(filepath.Join(root, "*"))
			assert.Equal(t, []string{path}, left, "no temp file or lock left behind")

			// at max_size exactly, it is read, but an edit that takes it
			// past max_size is not written either
			f.Max = int64(len(data))
			changed, err = f.UpsertRemove([]Entity{ours}, nil)
			assert.False(t, changed)
			require.ErrorIs(t, err, state.ErrTooLarge)
			assert.Contains(t, err.Error(), fmt.Sprintf("strata's edit would make it %d bytes, larger than max_size %d; left unchanged", len(data)+len(oursLine)+1, len(data)))
			got, _ = os.ReadFile(path)
			assert.Equal(t, string(data), string(got))
			// and within it, it is edited
			f.Max = int64(len(data) + len(oursLine) + 1)
			changed, err = f.UpsertRemove([]Entity{ours}, nil)
			require.NoError(t, err)
			assert.True(t, changed)
		})
	}
}

// A server write over max_size that lands in the file an exchange
// displaced is put back as it is, not edited (and not lost): the next read
// refuses it, and the upsert ends unavailable.
func TestUpsertPutsBackADisplacedServerWriteOverMax(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	old := bigGraph(10)
	require.NoError(t, os.WriteFile(path, old, 0o644))
	srv := bigGraph(1000)
	once := serverWritesInPlace(t, path, srv)
	_, err := File{Name: path, Max: int64(len(old)) + 1000}.Upsert([]Entity{ours})
	if !*once {
		t.Skip("no exchange on this file system")
	}
	require.ErrorIs(t, err, state.ErrTooLarge)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(srv, got), "the server's version is the file, unedited")
	assert.False(t, errors.Is(err, os.ErrNotExist))
}

// A server write within max_size displaced by the exchange, which strata's
// edit would take past it, is put back as the server wrote it, and the
// upsert ends saying the edit is too large: neither lost nor silently left
// without strata's entity.
func TestUpsertPutsBackADisplacedServerWriteItsEditWouldTakeOverMax(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	old := bigGraph(10)
	require.NoError(t, os.WriteFile(path, old, 0o644))
	max := int64(len(old) + 400)
	srv := append(bigGraph(10), []byte("\n"+string(bytes.Repeat([]byte(" "), 380)))...)
	require.LessOrEqual(t, int64(len(srv)), max)
	once := serverWritesInPlace(t, path, srv)
	_, err := File{Name: path, Max: max}.Upsert([]Entity{ours})
	if !*once {
		t.Skip("no exchange on this file system")
	}
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.True(t, tl.Edited)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(srv), string(got), "the server's version is the file, unedited")
}
