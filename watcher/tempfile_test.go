package watcher

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/strata-dev/strata/atomicfile"
)

// noTemp fails when any batch names one of strata's temp files.
func noTemp(t *testing.T, c *collector) {
	t.Helper()
	bs, _ := c.since(0)
	for _, b := range bs {
		for _, p := range b.Paths {
			if atomicfile.IsTemp(p) {
				t.Errorf("emitted strata's temp file %s", p)
			}
		}
	}
}

// TestStrataTempFilesIgnored: a temp file named with atomicfile.Prefix,
// created, written and renamed over its target, is never pending or
// emitted, even when every other file matches (Match nil); its target is.
func TestStrataTempFilesIgnored(t *testing.T) {
	w, src, c := startFake(t, Options{Debounce: 20 * time.Millisecond})
	_, n := c.since(0)
	tmp := filepath.Join(w.root, atomicfile.Prefix+"a.json-123")
	target := filepath.Join(w.root, "a.json")
	send(t, w, src, fsnotify.Event{Name: tmp, Op: fsnotify.Create})
	send(t, w, src, fsnotify.Event{Name: tmp, Op: fsnotify.Write})
	onLoop(t, w, func() {
		if len(w.pending) != 0 {
			t.Errorf("strata's temp file made %v pending", w.pending)
		}
	})
	send(t, w, src, fsnotify.Event{Name: tmp, Op: fsnotify.Rename})
	send(t, w, src, fsnotify.Event{Name: target, Op: fsnotify.Create})
	waitBatch(t, c, n, "a.json", hasPath("a.json"))
	noTemp(t, c)
}

// TestStrataTempFilesIgnoredOnDisk runs atomicfile's real writes (and a
// leftover temp file from a crash, present at start) under real fsnotify.
func TestStrataTempFilesIgnoredOnDisk(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "a.json")
	if _, err := atomicfile.WriteTemp(target, []byte("left by a crash"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := New(Options{Root: root, Debounce: 20 * time.Millisecond, Rescan: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := collect(w)
	errc := make(chan error, 1)
	go func() { errc <- w.Run(context.Background()) }()
	defer func() {
		w.Close()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	poll(t, "initial rescan", func() bool { bs, _ := c.since(0); return len(bs) > 0 && bs[0].Rescan })
	bs, n := c.since(0)
	for _, b := range bs {
		for _, p := range b.Paths {
			if strings.Contains(p, atomicfile.Prefix) {
				t.Errorf("the initial scan emitted %s", p)
			}
		}
	}
	for i := range 5 {
		if err := atomicfile.Write(target, []byte{byte('0' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A temp file that appears and is removed (a refused write).
	tmp, err := atomicfile.WriteTemp(target, []byte("x"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(tmp)
	waitBatch(t, c, n, "a.json", hasPath("a.json"))
	poll(t, "quiet", func() bool {
		var idle bool
		onLoop(t, w, func() { idle = len(w.pending) == 0 && len(w.ready) == 0 })
		return idle
	})
	noTemp(t, c)
}
