package semantic

import (
	"sync"

	"github.com/strata-dev/strata/state"
)

// readAhead reads a History's versions, from version from on, in a
// goroutine of its own, at most depth versions beyond the last one the walk
// has asked for: reading version i+1 back (a blob inflated, a delta
// applied) runs beside the walk's decoding of version i, so a blame over
// 10 000 versions waits for the longer of the two, not for their sum. Until
// stop returns, only that goroutine touches the History; a version's bytes
// are handed over once and then dropped, so the walk holds no more of them
// than it did reading them itself.
type readAhead struct {
	h      History
	from   int
	depth  int
	mu     sync.Mutex
	cond   sync.Cond
	got    []aheadVersion // version from+j at j
	asked  int            // the furthest version back the walk has asked for
	done   bool           // the goroutine has stopped reading
	quit   bool
	exited chan struct{}
}

type aheadVersion struct {
	entry   state.Entry
	ok      bool
	err     error
	content []byte
	cerr    error
	taken   bool // content handed over (and dropped)
}

func newReadAhead(h History, from, depth int) *readAhead {
	a := &readAhead{h: h, from: from, depth: depth, asked: from, exited: make(chan struct{})}
	a.cond.L = &a.mu
	go a.read()
	return a
}

func (a *readAhead) read() {
	defer close(a.exited)
	for i := a.from; ; i++ {
		a.mu.Lock()
		for !a.quit && i > a.asked+a.depth {
			a.cond.Wait()
		}
		if a.quit {
			a.done = true
			a.cond.Broadcast()
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		v := aheadVersion{}
		v.entry, v.ok, v.err = a.h.Entry(i)
		if v.ok && v.err == nil {
			v.content, v.cerr = a.h.Content(i)
		}
		a.mu.Lock()
		a.got = append(a.got, v)
		end := !v.ok || v.err != nil
		a.done = end
		a.cond.Broadcast()
		a.mu.Unlock()
		if end {
			return
		}
	}
}

// version waits for version i (i >= from) to be read, or for the reading
// to have stopped short of it (ok false).
func (a *readAhead) version(i int) (*aheadVersion, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i > a.asked {
		a.asked = i
		a.cond.Broadcast()
	}
	for i-a.from >= len(a.got) && !a.done {
		a.cond.Wait()
	}
	if i-a.from < len(a.got) {
		return &a.got[i-a.from], true
	}
	return nil, false
}

// Entry is History's Entry, for i >= from.
func (a *readAhead) Entry(i int) (state.Entry, bool, error) {
	if v, ok := a.version(i); ok {
		return v.entry, v.ok, v.err
	}
	a.stop() // stopped short of i (cannot happen before stop): read it here
	return a.h.Entry(i)
}

// Content is History's Content, for an i Entry has given. Asked again for
// bytes already handed over, it stops the reading and reads them itself.
func (a *readAhead) Content(i int) ([]byte, error) {
	v, ok := a.version(i)
	if ok {
		a.mu.Lock()
		taken := v.taken
		data, err := v.content, v.cerr
		v.taken, v.content = true, nil
		a.mu.Unlock()
		if !taken {
			return data, err
		}
	}
	a.stop()
	return a.h.Content(i)
}

// stop ends the reading and waits for its goroutine: the History is the
// caller's again once it returns. It may be called more than once.
func (a *readAhead) stop() {
	a.mu.Lock()
	a.quit = true
	a.cond.Broadcast()
	a.mu.Unlock()
	<-a.exited
}
