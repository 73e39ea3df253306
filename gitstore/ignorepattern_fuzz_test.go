package gitstore

import (
	"strings"
	"testing"
)

// FuzzIgnorePatterns reads any text as a .gitignore (a clone's, hostile)
// and matches any path against it: it never panics, never takes more than
// the budget it is given, and a plain name as a line matches that name
// (and "!name" after it re-includes it), in any folder and under either
// case rule.
func FuzzIgnorePatterns(f *testing.F) {
	for _, s := range []struct{ rules, path string }{
		{"*.env\n!keep.env\nbuild/\n", "a/b.env"},
		{"/**.env\nprod.en[!x]x\n", "prod.env"},
		{"config**/prod.json\n", "config/a/prod.json"},
		{"nul.json\x00x\n\\#h\n\\!b\ntrail   \nsp\\ \n", "#h"},
		{"[[:alpha:]]*\n**/cache/**\n", "x/cache/y"},
		{"*a*a*a*a*a*a*a*a*b\n", strings.Repeat("a", 200)},
	} {
		f.Add(s.rules, s.path, false)
	}
	f.Fuzz(func(t *testing.T, rules, path string, fold bool) {
		if len(rules) > 1<<16 || len(path) > 4096 {
			return
		}
		ps := ignoreList(parseIgnoreLines(rules, "", fold))
		budget := 100_000
		for _, isDir := range []bool{false, true} {
			ps.excluded(path, isDir, fold, &budget)
		}
		if budget < -wildBudget {
			t.Fatalf("budget overspent: %d", budget)
		}
		name := path[strings.LastIndexByte(path, '/')+1:]
		if name == "" || strings.ContainsAny(name, "*?[\\!# \r\n\x00") {
			return
		}
		b := 100_000
		if !ignoreList(parseIgnoreLines(name+"\n", "", fold)).excluded(path, false, fold, &b) {
			t.Fatalf("the line %q does not ignore %q", name, path)
		}
		b = 100_000
		if ignoreList(parseIgnoreLines(name+"\n!"+name+"\n", "", fold)).excluded(path, false, fold, &b) {
			t.Fatalf("!%s after %s does not re-include %q", name, name, path)
		}
	})
}
