package validate

import (
	"regexp"
	"testing"
)

// The regular expressions the number matchers replace, as the YAML core
// schema and JSON define them.
var (
	yamlDecimalRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	jsonNumberRE  = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
)

func checkNumberMatchers(t *testing.T, s string) {
	t.Helper()
	if got, want := isYAMLDecimal(s), yamlDecimalRE.MatchString(s); got != want {
		t.Fatalf("isYAMLDecimal(%q) = %v, the expression says %v", s, got, want)
	}
	if got, want := isJSONNumber(s), jsonNumberRE.MatchString(s); got != want {
		t.Fatalf("isJSONNumber(%q) = %v, the expression says %v", s, got, want)
	}
}

// TestNumberMatchers compares the matchers with the expressions on every
// string of up to six characters over the characters a number is made of
// (and one that is not): 600 000 strings.
func TestNumberMatchers(t *testing.T) {
	const alphabet = "019-+.eEx"
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		checkNumberMatchers(t, prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 6)
}

func FuzzNumberMatchers(f *testing.F) {
	for _, s := range []string{"", "0", "-0.5e+10", "+.5", "1.", "007", "1e", ".e1", "0x1f", "1_000", "١"} {
		f.Add(s)
	}
	f.Fuzz(checkNumberMatchers)
}
