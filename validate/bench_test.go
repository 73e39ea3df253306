package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// BenchmarkDecodeJSON measures DecodeJSON alone: what every validation, and
// a blame for each version it reads back, pays before any schema is applied.
func BenchmarkDecodeJSON(b *testing.B) {
	valid, err := os.ReadFile(filepath.Join("testdata", "valid", "workflow-state.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"workflow-state", valid}, {"50keys", fiftyKeys()}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ps := DecodeJSON("f.json", c.data); ps != nil {
					b.Fatal(ps)
				}
			}
		})
	}
}

// BenchmarkDecodeJSONFor is DecodeJSON building one member of the 50-key
// document, as a blame reading back old versions for one key does.
func BenchmarkDecodeJSONFor(b *testing.B) {
	data := fiftyKeys()
	want := &Want{Keys: map[string]*Want{"since": {All: true}}}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ps := DecodeJSONFor("f.json", data, want); ps != nil {
			b.Fatal(ps)
		}
	}
}

// fiftyKeys is a document of the shape of engine's blame benchmark: 50 keys
// in one object beside one more.
func fiftyKeys() []byte {
	var sb strings.Builder
	sb.WriteString(`{"since": 0, "keys": {`)
	for i := range 50 {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "\"key%02d\": %d", i, 9950+i)
	}
	sb.WriteString("}}\n")
	return []byte(sb.String())
}
