package validate

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkValidateWorkflowState measures the in-process cost of validating
// one workflow-state file with a warm Validator, as `strata validate` does
// for each of many files.
func BenchmarkValidateWorkflowState(b *testing.B) {
	valid, err := os.ReadFile(filepath.Join("testdata", "valid", "workflow-state.json"))
	if err != nil {
		b.Fatal(err)
	}
	invalid := []byte(`{"type": "APEX!", "phase": "", "lastUpdated": "yesterday",
  "enforcement": {"violations": [{"code": "V-SEC-1", "severity": "HIGH"}], "blocking": false}}`)
	v := newValidator(b, Options{})
	for _, c := range []struct {
		name string
		data []byte
	}{{"valid", valid}, {"invalid", invalid}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				v.Validate(".claude/workflow-state.json", c.data, "workflow-state")
			}
		})
	}
}

// BenchmarkNewAndCompile measures a cold start: a new Validator compiling
// the workflow-state schema on first use.
func BenchmarkNewAndCompile(b *testing.B) {
	for b.Loop() {
		v := newValidator(b, Options{})
		v.Validate(".claude/workflow-state.json", []byte("{}"), "workflow-state")
	}
}
