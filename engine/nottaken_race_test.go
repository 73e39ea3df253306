package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-dev/strata/config"
)

// Records running at once (the watcher's batch, a hook's record, a
// restore) each take their own entries out of the not-taken note; none
// puts back an entry another took out. Records hold the write-phase lock
// shared, and without the note's own lock the later write of the note
// restored what the earlier had removed, so that file's deletion never
// left the machine (attack33e E2).
func TestVoidNotTakenConcurrent(t *testing.T) {
	e := newRepo(t)
	const n = 16
	noted := map[string]string{}
	for i := 0; i < n; i++ {
		p := fmt.Sprintf(".claude/f%02d.json", i)
		noted[p] = fmt.Sprintf("%040d", i)
		edit(t, e, p, "{}\n")
	}
	data, err := json.Marshal(notTakenFile{Paths: noted})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(e.notTakenPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.notTakenPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	engines := make([]*Engine, n)
	for i := range engines {
		if engines[i], err = Open(e.Config().Root); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			p := fmt.Sprintf(".claude/f%02d.json", i)
			if err := engines[i].voidNotTaken([]config.Kept{{Path: p}}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	if left := e.notTakenNoted(); len(left) != 0 {
		t.Errorf("entries put back by a record running beside another: %v", left)
	}
}
