package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkBatchCommit times Add and Commit of batches of n new files, made
// durable file by file (fsync) or by syncfs of the file system, in turn,
// to choose WholeFrom; it reports both and their ratio. Each batch writes
// in a fresh directory; nothing is deleted until the benchmark ends.
func BenchmarkBatchCommit(b *testing.B) {
	base, err := os.MkdirTemp("", "strata-batchbench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(base) })
	was, wasDirty := WholeFrom, FewDirty
	defer func() { WholeFrom, FewDirty = was, wasDirty }()
	FewDirty = 1 << 62 // syncfs whatever else is unwritten
	batch := func(b *testing.B, n, from int) time.Duration {
		WholeFrom = from
		dir, err := os.MkdirTemp(base, "d")
		if err != nil {
			b.Fatal(err)
		}
		var bt Batch
		start := time.Now()
		for j := 0; j < n; j++ {
			if err := bt.Add(filepath.Join(dir, "f"+strconv.Itoa(j)), []byte(`{"n": `+strconv.Itoa(j)+"}\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := bt.Commit(nil); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for _, n := range []int{4, 8, 16, 32, 64, 128, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var fsync, syncfs time.Duration
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					fsync += batch(b, n, 1<<30)
					syncfs += batch(b, n, 1)
				} else {
					syncfs += batch(b, n, 1)
					fsync += batch(b, n, 1<<30)
				}
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
			b.ReportMetric(ms(fsync), "fsync-ms/op")
			b.ReportMetric(ms(syncfs), "syncfs-ms/op")
			b.ReportMetric(float64(syncfs)/float64(fsync), "syncfs/fsync")
		})
	}
}
