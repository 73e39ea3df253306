package validate

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestConcurrentUse checks that one Validator serves many goroutines, as the
// watcher and `strata validate` use it (run with -race).
func TestConcurrentUse(t *testing.T) {
	v := newValidator(t, Options{Root: t.TempDir()})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, schema := range []string{"workflow-state", "phase-outcome", "initiative", "missing.json", "jsonl-mcp"} {
				ps := v.Validate("f", []byte(`{"type": "X"}`), schema)
				assert.NotEmpty(t, ps, "%d %s", i, schema)
			}
		}()
	}
	wg.Wait()
}
