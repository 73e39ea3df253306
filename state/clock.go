package state

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The one wall clock of strata. Every date that strata records or compares
// with (commit times, TTL deadlines, "2h ago", "newer than now") comes from
// Now; code that only measures a duration may use time.Now/time.Since.
//
// A test binary (and only a test binary: it calls UseTestClock from its
// TestMain, or, for strata-serve, from a file built only with the
// strata_testclock tag) can move the clock through the environment:
//
//	STRATA_TEST_NOW=2026-11-22T09:30:00Z   the clock reads this instant at
//	                                       STRATA_TEST_EPOCH (Unix ns; default:
//	                                       process start) and runs on from it
//	STRATA_TEST_NOW=+8760h                 the wall clock moved by a duration
//
// so that no test depends on the day it runs, and the suite can be run as
// if it were a year later.
var (
	clockOnce sync.Once
	clockFn   = time.Now
	testClock bool
)

// Now returns the current time on strata's clock.
func Now() time.Time {
	clockOnce.Do(loadClock)
	return clockFn()
}

// UseTestClock makes Now honour STRATA_TEST_NOW. Only test binaries call it.
func UseTestClock() { testClock = true }

func loadClock() {
	if !testClock {
		return
	}
	clockFn = TestClock(os.Getenv("STRATA_TEST_NOW"), os.Getenv("STRATA_TEST_EPOCH"))
}

// TestClock builds the clock that STRATA_TEST_NOW (spec) and
// STRATA_TEST_EPOCH (epoch) describe; an empty or unreadable spec is the
// wall clock.
func TestClock(spec, epoch string) func() time.Time {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return time.Now
	}
	if spec[0] == '+' || spec[0] == '-' {
		d, err := time.ParseDuration(spec)
		if err != nil {
			return time.Now
		}
		return func() time.Time { return time.Now().Add(d) }
	}
	at, err := time.Parse(time.RFC3339Nano, spec)
	if err != nil {
		return time.Now
	}
	start := time.Now()
	if ns, err := strconv.ParseInt(epoch, 10, 64); err == nil {
		start = time.Unix(0, ns)
	}
	return func() time.Time { return at.Add(time.Since(start)) }
}
