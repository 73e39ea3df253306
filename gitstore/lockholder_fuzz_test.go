package gitstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/internal/proc"
)

// FuzzLockHolder reads whatever a <ref>.lock may hold (a hash, a holder
// line of any strata, git's empty file, garbage) without panicking, names a
// whole identity only with the flock mark's field count, and reads back
// every line holderLine writes as it was written.
func FuzzLockHolder(f *testing.F) {
	f.Add([]byte("strata-lock-holder 4242 4026531836 5b1c-9 123456 flock\n"))
	f.Add([]byte("strata-lock-holder 4242 4026531836 5b1c-9 123456\n"))
	f.Add([]byte("strata-lock-holder 4242\n"))
	f.Add([]byte("0123456789abcdef0123456789abcdef01234567\n"))
	f.Add([]byte(""))
	f.Add([]byte("strata-lock-holder 1 2 3 4 flock extra\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join(t.TempDir(), "state.lock")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		holder, flocked := lockHolder(name)
		if flocked && !holder.Known() {
			t.Fatalf("%q: flock mark without a whole identity: %+v", data, holder)
		}
		if holder.Pid < 0 {
			t.Fatalf("%q: pid %d", data, holder.Pid)
		}
		if holder.Known() {
			for _, mark := range []bool{false, true} {
				line := holderLine(holder, mark)
				if err := os.WriteFile(name, []byte(line), 0o644); err != nil {
					t.Fatal(err)
				}
				if back, fl := lockHolder(name); back != holder || fl != mark {
					t.Fatalf("%q read back as %+v, %v; want %+v, %v", line, back, fl, holder, mark)
				}
			}
		}
		_ = proc.Gone(holder)
	})
}
