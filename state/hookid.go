package state

import "strings"

// HookID keeps a Claude Code session or tool-use id only when it looks like
// one (letters, digits, ._:@-, at most 128), else returns "": it arrives on
// hook stdin or in another machine's commit trailers, and ends up in commit
// messages and on terminals.
func HookID(v string) string {
	if v == "" || len(v) > 128 {
		return ""
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._:@-", c) >= 0) {
			return ""
		}
	}
	return v
}
