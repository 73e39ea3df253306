package engine

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/gitstore"
	"github.com/strata-dev/strata/state"
)

// lazyHistory is a path's recorded versions, read back from the last one
// as far as they are asked for: a blame that stops early reads neither the
// older commits nor their bytes, but for a few read ahead. One goroutine
// reads the entries and each version's bytes (readAhead of them ahead of
// the walk) while the walk decodes the ones it has: a blame of a whole
// 10 000-version file read, then decoded, each version in turn. close
// stops the reading and waits for it.
type lazyHistory struct {
	e    *Engine
	path string
	// the entries newest first, as far as read, in blocks of entryBlock:
	// one growing slice copied all it held at each doubling (a blame
	// of 10 000 versions spent 8% of its time there)
	ents  [][]state.Entry
	n     int
	items chan versionRead // from read, closed when it ends
	ended bool             // items is closed and drained
	done  chan struct{}    // closed by close: read stops
	// contents: the bytes read ahead of the versions Content has not yet
	// given, by their index
	contents map[int]contentRead
	err      error
	closed   bool
}

// versionRead is one version as read: its entry (or the log's error) and
// its bytes (or why they could not be read).
type versionRead struct {
	entry   state.Entry
	logErr  error
	content contentRead
}

type contentRead struct {
	data []byte
	err  error
}

const (
	entryBlock = 256
	// readAhead is how many versions are read ahead of the walk: what a
	// blame that stops reads for nothing (the recent keys of a file stop
	// some 50 versions back), against what keeps the reader busy
	readAhead = 16
)

// history opens path's versions, reading its last one. A path never
// recorded gives an error wrapping state.ErrNotFound.
func (e *Engine) history(path string) (*lazyHistory, error) {
	h := &lazyHistory{e: e, path: path, items: make(chan versionRead, readAhead), done: make(chan struct{}), contents: map[int]contentRead{}}
	go h.read()
	if _, ok, err := h.Entry(0); err != nil || !ok {
		h.close()
		if err == nil || errors.Is(err, state.ErrNotFound) {
			err = fmt.Errorf("%s: never recorded: %w", path, state.ErrNotFound)
		}
		return nil, err
	}
	return h, nil
}

// historyReaders counts the readers running (read), for the tests: none
// is left once a history is closed.
var historyReaders atomic.Int32

// read reads the versions, newest first, into items until the log ends,
// fails, or close is called.
func (h *lazyHistory) read() {
	historyReaders.Add(1)
	defer close(h.items)
	defer historyReaders.Add(-1) // before items is closed: close waits for that
	for en, err := range h.e.store.LogSeq(h.e.store.StateRef(), state.LogQuery{Path: h.path}) {
		v := versionRead{entry: en, logErr: err}
		if err == nil {
			v.content.data, v.content.err = h.content(en)
		}
		select {
		case h.items <- v:
		case <-h.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// close stops the reading and waits for it to end: nothing reads the store
// once the history is closed.
func (h *lazyHistory) close() {
	if h.closed {
		return
	}
	h.closed = true
	close(h.done)
	for range h.items { // nothing once ended
	}
}

// Entry is the i-th version back from the last (0); ok is false past the
// first one.
func (h *lazyHistory) Entry(i int) (state.Entry, bool, error) {
	for h.n <= i && h.err == nil && !h.ended {
		v, ok := <-h.items
		switch {
		case !ok:
			h.ended = true
		case v.logErr != nil:
			h.err = v.logErr
		default:
			if h.n%entryBlock == 0 {
				h.ents = append(h.ents, make([]state.Entry, 0, entryBlock))
			}
			last := len(h.ents) - 1
			h.ents[last] = append(h.ents[last], v.entry)
			h.contents[h.n] = v.content
			h.n++
		}
	}
	if i < h.n {
		return h.entry(i), true, nil
	}
	return state.Entry{}, false, h.err
}

// entry is the i-th entry read.
func (h *lazyHistory) entry(i int) state.Entry { return h.ents[i/entryBlock][i%entryBlock] }

// Content is the i-th version's bytes (nil for a deletion), for an i Entry
// has given: as read ahead, the first time it is asked for.
func (h *lazyHistory) Content(i int) ([]byte, error) {
	if c, ok := h.contents[i]; ok {
		delete(h.contents, i)
		return c.data, c.err
	}
	return h.content(h.entry(i))
}

// content reads the bytes of the version en records.
func (h *lazyHistory) content(en state.Entry) ([]byte, error) {
	if en.Action == state.ActionDelete {
		return nil, nil
	}
	data, err := h.e.readAt(en.Commit, h.path)
	var missing *gitstore.MissingBlobError
	if errors.Is(err, state.ErrTooLarge) || errors.As(err, &missing) {
		return nil, err // names the path and the version already
	}
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", h.path, state.ShortID(en.Commit), err)
	}
	return data, nil
}

// lastVersion is the version of k's file the history rules judge a new one
// against (nil when none, and always nil for a class without such rules,
// see UsesHistory): the one the snapshot (head, files) holds, else the last
// one that existed before path's deletion was recorded (lastExisting). So
// deleting a Phase Outcome or an initiative, recording that, and writing
// the file again is judged as an edit of the deleted version, not as a
// first version: the same bytes come back (a restore by hand), other bytes
// are refused as an edit would be. gone, when not nil, holds the paths
// absent from files whose history is worth reading (see deletedPaths):
// any other is taken as never recorded, without a walk. A recorded version
// over max_size is never a valid one (a remote's history may hold one): it
// is passed over unread, as if that version were not there.
func (e *Engine) lastVersion(k config.Kept, head string, files map[string]string, gone map[string]bool) ([]byte, error) {
	if !UsesHistory(k) || head == "" {
		return nil, nil
	}
	var data []byte
	var err error
	if _, had := files[k.Path]; had {
		data, err = e.readAt(head, k.Path)
	} else if gone == nil || gone[k.Path] {
		data, err = e.lastExisting(k.Path)
	}
	if errors.Is(err, state.ErrTooLarge) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read recorded %s: %w", k.Path, err)
	}
	return data, nil
}

// deletedPaths returns which of paths, absent from the snapshot files and of
// a class with history rules, the state ref's history names (recorded,
// then deleted), in one walk of the time index per 64 of them (LastTimes
// reads every commit for more, its path filter then matching nearly all):
// the paths lastVersion reads the history of when a batch writes them
// again.
func (e *Engine) deletedPaths(paths []config.Kept, files map[string]string) (map[string]bool, error) {
	var names []string
	for _, k := range paths {
		if _, had := files[k.Path]; !had && UsesHistory(k) && !OutsideTree(k.Path) {
			names = append(names, k.Path)
		}
	}
	gone := map[string]bool{}
	for len(names) > 0 {
		chunk := names[:min(len(names), 64)]
		names = names[len(chunk):]
		last, err := e.store.LastTimes(e.store.StateRef(), chunk)
		if err != nil {
			return nil, err
		}
		for p := range last {
			gone[p] = true
		}
	}
	return gone, nil
}

// lastExisting returns the newest version of path the state ref's history
// holds, nil when no recorded commit ever held it. It walks path's entries
// in the time index (newest first, commits whose path filter cannot name
// path are never read) and reads one tree per entry until one holds the
// file: a change's own commit, or a deletion's parent. A version over
// max_size is passed over.
func (e *Engine) lastExisting(path string) ([]byte, error) {
	for en, err := range e.store.LogSeq(e.store.StateRef(), state.LogQuery{Path: path}) {
		if errors.Is(err, state.ErrNotFound) {
			return nil, nil // no ref yet
		}
		if err != nil {
			return nil, err
		}
		at := en.Commit
		if en.Action == state.ActionDelete {
			if at = en.Parent; at == "" {
				continue
			}
		}
		data, err := e.readAt(at, path)
		if errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrTooLarge) {
			continue // over max_size: never a valid version, passed over unread
		}
		return data, err
	}
	return nil, nil
}
