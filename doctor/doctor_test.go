package doctor

import (
	"errors"
	"strings"
	"testing"
)

// TestCompanionFinding: doctor says where strata-serve is, or warns that
// strata mcp and strata timeline --serve cannot start, with the fix.
func TestCompanionFinding(t *testing.T) {
	ok := companionFinding(Options{Companion: "/usr/local/bin/strata-serve"})
	if ok.Level != LevelOK || !strings.Contains(ok.Message, "/usr/local/bin/strata-serve") {
		t.Errorf("found: %+v", ok)
	}
	missing := companionFinding(Options{CompanionErr: errors.New("strata-serve is missing: ...")})
	if missing.Level != LevelWarn || missing.Fix == "" || !strings.Contains(missing.Message, "missing") {
		t.Errorf("missing: %+v", missing)
	}
	if f := companionFinding(Options{}); f.Level != LevelWarn {
		t.Errorf("not looked for: %+v", f)
	}
}
