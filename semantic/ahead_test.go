package semantic

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-dev/strata/state"
)

// countingHistory is a History of n versions that counts the reads made
// of it and fails the test on a read made while it is closed.
type countingHistory struct {
	t      *testing.T
	n      int
	reads  atomic.Int64
	closed atomic.Bool
}

func (c *countingHistory) Entry(i int) (state.Entry, bool, error) {
	if c.closed.Load() {
		c.t.Errorf("Entry(%d) after stop returned", i)
	}
	if i >= c.n {
		return state.Entry{}, false, nil
	}
	return state.Entry{Commit: fmt.Sprint(i), Time: time.Date(2026, 11, 22, 0, 0, c.n-i, 0, time.UTC)}, true, nil
}

func (c *countingHistory) Content(i int) ([]byte, error) {
	if c.closed.Load() {
		c.t.Errorf("Content(%d) after stop returned", i)
	}
	c.reads.Add(1)
	return []byte(fmt.Sprintf(`{"v": %d}`, i)), nil
}

func TestReadAheadGivesEachVersionInTurn(t *testing.T) {
	h := &countingHistory{t: t, n: 100}
	a := newReadAhead(h, 1, 4)
	for i := 1; ; i++ {
		e, ok, err := a.Entry(i)
		require.NoError(t, err)
		if !ok {
			require.Equal(t, 100, i)
			break
		}
		require.Equal(t, fmt.Sprint(i), e.Commit)
		data, err := a.Content(i)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf(`{"v": %d}`, i), string(data))
	}
	a.stop()
	h.closed.Store(true)
	require.EqualValues(t, 99, h.reads.Load())
}

// A walk that stops early leaves at most depth versions read beyond it,
// and nothing touches the History once stop has returned.
func TestReadAheadIsBoundedAndStops(t *testing.T) {
	h := &countingHistory{t: t, n: 10000}
	a := newReadAhead(h, 1, 16)
	for i := 1; i <= 50; i++ {
		_, ok, err := a.Entry(i)
		require.True(t, ok)
		require.NoError(t, err)
		_, err = a.Content(i)
		require.NoError(t, err)
	}
	time.Sleep(20 * time.Millisecond) // let the reading run as far as it may
	a.stop()
	h.closed.Store(true)
	require.LessOrEqual(t, h.reads.Load(), int64(50+16+1))
	// an entry already read is still given after stop; bytes asked again
	// are read by the caller itself, as stop made the History its own
	h.closed.Store(false)
	e, ok, _ := a.Entry(7)
	require.True(t, ok)
	require.Equal(t, "7", e.Commit)
	data, err := a.Content(7)
	require.NoError(t, err)
	require.Equal(t, `{"v": 7}`, string(data))
}
