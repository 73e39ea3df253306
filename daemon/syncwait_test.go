package daemon

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/engine"
)

// A remote that moved in every round of a sync is reached and busy: the
// background sync tries it again within two seconds however often that
// happened, while a remote that is down (or whose ref lock file stays) is
// backed off (attack41 F2: the wait grew to minutes, nothing synced).
func TestSyncRetryWait(t *testing.T) {
	moved := fmt.Errorf("%w again while this sync merged it 3 more times", engine.ErrRemoteMoved)
	locked := fmt.Errorf("push: %w", &engine.RemoteLockedError{Remote: "origin", Ref: "refs/strata/state", Lock: "x.lock"})
	down := errors.New("fetch origin: could not read from remote repository")
	for failures := 1; failures <= 12; failures++ {
		if w := syncRetryWait(failures, moved); w < time.Second || w > 2*time.Second {
			t.Fatalf("moved, failure %d: wait %v", failures, w)
		}
	}
	if w := syncRetryWait(12, locked); w != maxBackoff {
		t.Fatalf("locked: wait %v, want %v", w, maxBackoff)
	}
	if w := syncRetryWait(12, down); w != maxBackoff {
		t.Fatalf("down: wait %v, want %v", w, maxBackoff)
	}
	if w := syncRetryWait(3, down); w != 4*time.Second {
		t.Fatalf("down, third failure: wait %v", w)
	}
}
