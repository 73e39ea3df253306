package daemon

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// A rescan that lists a kept file just as it is deleted and made again
// (`rm f; printf … > f`) reads it only once it has been quiet for the
// debounce, as an event on it would be: the history never shows a
// deletion no debounce window would have shown (attack24 "Spurious
// deletion in the watcher"). The hooks put the rm between the rescan's
// listing and what it does with it, and the new version after that.
func TestRescanFindingIsDebounced(t *testing.T) {
	eng := newRepo(t)
	const notes = ".claude/notes.json"
	write(t, eng, notes, `{"v": 1}`)
	name := eng.Config().Abs(notes)

	// 0 idle, 1 armed, 2 deleted by the rescan's listing, 3 made again
	var step atomic.Int32
	rescanListed = func() {
		if step.CompareAndSwap(1, 2) {
			if err := os.Remove(name); err != nil {
				t.Error(err)
			}
		}
	}
	rescanDone = func() {
		if step.CompareAndSwap(2, 3) {
			if err := os.WriteFile(name, []byte(`{"v": 2}`), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { rescanListed, rescanDone = nil, nil })

	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, eng, Options{Debounce: 20 * time.Millisecond, Rescan: 30 * time.Millisecond,
			Ready: func() { close(ready) }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("no catch-up in 10s")
	}
	step.Store(1)

	actions := func() []state.Action {
		ents, err := eng.Log(state.LogQuery{Path: notes})
		if err != nil {
			t.Fatal(err)
		}
		var out []state.Action
		for _, e := range slices.Backward(ents) { // oldest first
			out = append(out, e.Action)
		}
		return out
	}
	waitFor(t, "the new version to be recorded", func() bool {
		a := actions()
		return step.Load() == 3 && len(a) > 1 && a[len(a)-1] != state.ActionDelete
	})
	if got, want := actions(), []state.Action{state.ActionAdd, state.ActionUpdate}; !slices.Equal(got, want) {
		t.Fatalf("history of %s: %v, want %v (no deletion)", notes, got, want)
	}
}
