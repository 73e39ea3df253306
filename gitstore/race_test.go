package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-dev/strata/state"
)

// TestConcurrentRecord records from several Stores at once while git itself
// packs the refs and rewrites the state ref in loops, both under git's lock
// protocol. No successful Record may be lost, the ref may never be seen empty
// or broken, and the repository must stay fsck-clean.
func TestConcurrentRecord(t *testing.T) {
	for _, kind := range []string{"plain", "worktree"} {
		t.Run(kind, func(t *testing.T) {
			r := newTestRepo(t, kind)
			snap := r.snapshot(t)
			const (
				stores    = 3
				perStore  = 2 // goroutines per Store
				perWorker = 15
			)
			var ss []*Store
			for i := 0; i < stores; i++ {
				s, err := Open(r.open)
				if err != nil {
					t.Fatal(err)
				}
				ss = append(ss, s)
			}
			ref := ss[0].StateRef()
			refFile := filepath.Join(r.common, filepath.FromSlash(ref))
			// Seed the ref so the git loops have something to rewrite.
			mustRecord(t, ss[0], change("seed.json", "0", t0))

			stop := make(chan struct{})
			var bg sync.WaitGroup
			var packs, rewrites, broken atomic.Int64
			bg.Add(3)
			go func() { // git pack-refs --all in a loop
				defer bg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := gitOut(r.main, nil, "pack-refs", "--all"); err == nil {
						packs.Add(1)
					}
				}
			}()
			go func() { // same-value rewrites of the ref, CAS on the old value
				defer bg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					h, err := gitOut(r.wt, nil, "rev-parse", "--verify", ref)
					if err != nil {
						broken.Add(1)
						continue
					}
					if _, err := gitOut(r.wt, nil, "update-ref", ref, h, h); err == nil {
						rewrites.Add(1)
					}
				}
			}()
			go func() { // the loose ref is either absent or a whole hash
				defer bg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					b, err := os.ReadFile(refFile)
					if err == nil && (len(b) != 41 || b[40] != '\n') {
						broken.Add(1)
						t.Errorf("loose ref read as %q", b)
					}
					time.Sleep(100 * time.Microsecond)
				}
			}()

			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				done []string
				errs []error
			)
			for i := 0; i < stores*perStore; i++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					s := ss[w%stores]
					for j := 0; j < perWorker; j++ {
						es, err := s.Record(change(fmt.Sprintf("w%d/state.json", w), fmt.Sprintf("%d-%d", w, j),
							t0.Add(time.Duration(j)*time.Second)))
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						} else {
							done = append(done, es[0].Commit)
						}
						mu.Unlock()
					}
				}(i)
			}
			wg.Wait()
			close(stop)
			bg.Wait()

			for _, err := range errs {
				if !errors.Is(err, state.ErrLocked) {
					t.Errorf("record: %v", err)
				}
			}
			if len(done) == 0 {
				t.Fatal("no record succeeded")
			}
			t.Logf("%d records, %d failed, %d pack-refs, %d same-value rewrites", len(done), len(errs), packs.Load(), rewrites.Load())
			if broken.Load() != 0 {
				t.Errorf("the ref read as broken %d times", broken.Load())
			}
			head := runGit(t, r.wt, "rev-parse", "--verify", ref)
			chain := strings.Split(runGit(t, r.wt, "rev-list", "--first-parent", head), "\n")
			onChain := map[string]bool{}
			for _, c := range chain {
				onChain[c] = true
			}
			for _, c := range done {
				if !onChain[c] {
					t.Errorf("recorded commit %s is not on the chain", c)
				}
			}
			if len(chain) != len(done)+1 { // +1: the seed
				t.Errorf("chain has %d commits, want %d successful records + seed", len(chain), len(done))
			}
			// Every worker's last successful version is what the head holds.
			files, err := ss[1].Files(head)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != stores*perStore+1 {
				t.Errorf("head snapshot has %d files, want %d", len(files), stores*perStore+1)
			}
			r.checkInvariants(t, snap)
		})
	}
}
