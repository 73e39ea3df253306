package engine

import (
	"testing"
)

// BenchmarkClassify1000 classifies the 1 000 kept files of statusRepo once
// per op, after a first pass that fills the engine's per-run caches (folder
// resolutions, nested repositories, git's rules): what each further
// classification of a path costs in one command's run (a sync classifies
// each received path four or five times).
func BenchmarkClassify1000(b *testing.B) {
	e := statusRepo(b, 1000)
	paths, err := e.AllPaths()
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range paths {
		if _, ok := e.Config().Classify(p.Path); !ok {
			b.Fatalf("%s is not kept", p.Path)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range paths {
			e.Config().Classify(p.Path)
		}
	}
}
