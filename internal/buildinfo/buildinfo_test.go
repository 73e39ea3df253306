package buildinfo

import "testing"

// make's git describe and Go's recorded revision of one commit are one
// build; other commits, a dirty against a clean build, are not; an unknown
// build matches anything, and a tag is compared only with itself.
func TestMismatch(t *testing.T) {
	const full = "9413b0b8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6"
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"9413b0b", full, false},
		{"9413b0b-dirty", full + "+dirty", false},
		{"v1.2.0-3-g9413b0b", full, false},
		{"9413b0b", full + "+dirty", true},
		{"1111111", full, true},
		{"", full, false},
		{"v1.2.0", "v1.2.0", false},
		{"v1.2.0", "v1.3.0", true},
		{"v1.2.0", full, false},
	} {
		if got := Mismatch(c.a, c.b); got != c.want {
			t.Errorf("Mismatch(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Mismatch(c.b, c.a); got != c.want {
			t.Errorf("Mismatch(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}
