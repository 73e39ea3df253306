package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkBatchNewFiles puts 1 000 new files in place durably, as a sync
// writes the files another machine added: AddNew (unnamed temp files, each
// linked into place) against Add (named temp files, each renamed), both
// made durable by the same one-pass flush when the machine allows it, in
// turn, in a rotating order, each in a fresh directory, after flushing what
// the step before left dirty. It reports each one's milliseconds per batch
// and the ratio new/named.
func BenchmarkBatchNewFiles(b *testing.B) {
	const files = 1000
	base := b.TempDir()
	data := []byte(`{"n": 1, "at": "2026-11-23T21:00:00.123456789Z"}` + "\n")
	put := func(addNew bool, dir string) time.Duration {
		syscall.Sync()
		start := time.Now()
		var bt Batch
		bt.Expect(files)
		add := bt.Add
		if addNew {
			add = bt.AddNew
		}
		for i := 0; i < files; i++ {
			if err := add(filepath.Join(dir, "f"+strconv.Itoa(i)+".json"), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if appeared, err := bt.Commit(nil); err != nil || len(appeared) > 0 {
			b.Fatal(appeared, err)
		}
		return time.Since(start)
	}
	var newT, namedT time.Duration
	for i := 0; i < b.N; i++ {
		for j := 0; j < 2; j++ {
			dir, err := os.MkdirTemp(base, "d")
			if err != nil {
				b.Fatal(err)
			}
			if (i+j)%2 == 0 {
				newT += put(true, dir)
			} else {
				namedT += put(false, dir)
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(newT), "addnew-ms/op")
	b.ReportMetric(ms(namedT), "named-ms/op")
	b.ReportMetric(float64(newT)/float64(namedT), "new/named")
}
