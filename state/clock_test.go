package state

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTestClock(t *testing.T) {
	pin := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	epoch := time.Now().Add(-90 * time.Second)
	got := TestClock(pin.Format(time.RFC3339), strconv.FormatInt(epoch.UnixNano(), 10))()
	assert.WithinDuration(t, pin.Add(90*time.Second), got, 5*time.Second, "a pinned clock runs on from its epoch")

	got = TestClock("+8784h", "")()
	assert.WithinDuration(t, time.Now().Add(8784*time.Hour), got, 5*time.Second, "a shifted clock")

	for _, spec := range []string{"", "tomorrow", "+1x"} {
		assert.WithinDuration(t, time.Now(), TestClock(spec, "")(), 5*time.Second, "%q is the wall clock", spec)
	}
}

func TestNowIsTheWallClockOutsideTests(t *testing.T) {
	t.Setenv("STRATA_TEST_NOW", "2001-01-01T00:00:00Z")
	assert.False(t, testClock, "only a TestMain that calls UseTestClock honours STRATA_TEST_NOW")
	assert.WithinDuration(t, time.Now(), Now(), 5*time.Second)
}
