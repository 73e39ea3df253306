package layers

import (
	"testing"
	"time"
)

// ageOf counts on the calendar: ages past time.Duration's 292 years (a date
// a file gives) are told as they are, not as the largest duration.
func TestAgeOf(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 30, 0, 500, time.UTC)
	for _, c := range []struct {
		t    time.Time
		secs int64
		text string
	}{
		{now.Add(-45 * time.Second), 45, "45s"},
		{now.Add(-12*time.Minute - 30*time.Second), 750, "12m"},
		{now.Add(-3*time.Hour - 20*time.Minute), 12000, "3h20m"},
		{now.Add(-52 * time.Hour), 187200, "2d4h"},
		{now.Add(-1500 * time.Millisecond), 1, "1s"},
		{now.Add(time.Nanosecond), 0, future},
		{now.Add(1500 * time.Millisecond), -1, future},
		{time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), -251606957398, future},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), 63930940200, "739941d10h"},
	} {
		secs, text := ageOf(c.t, now)
		if secs != c.secs || text != c.text {
			t.Errorf("ageOf(%s) = %d, %q; want %d, %q", c.t, secs, text, c.secs, c.text)
		}
	}
}
