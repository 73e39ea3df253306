package watcher

import "github.com/fsnotify/fsnotify"

// source is what the Watcher needs from fsnotify. It is an interface so tests
// can inject events and errors the kernel will not produce on demand (a queue
// overflow); production code always uses fsnotifySource.
type source interface {
	Add(dir string) error
	Remove(dir string) error
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error
}

// fsnotifySource adapts *fsnotify.Watcher, whose channels are struct fields,
// to source.
type fsnotifySource struct{ w *fsnotify.Watcher }

var _ source = fsnotifySource{}

func newFsnotifySource() (source, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return fsnotifySource{w}, nil
}

func (s fsnotifySource) Add(dir string) error          { return s.w.Add(dir) }
func (s fsnotifySource) Remove(dir string) error       { return s.w.Remove(dir) }
func (s fsnotifySource) Events() <-chan fsnotify.Event { return s.w.Events }
func (s fsnotifySource) Errors() <-chan error          { return s.w.Errors }
func (s fsnotifySource) Close() error                  { return s.w.Close() }
