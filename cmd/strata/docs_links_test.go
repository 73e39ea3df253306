package main

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The project's documents stand alone: README.md and every Markdown file
// under docs/ link only to files of this repository, and every such file
// (and heading anchor) exists.
func TestDocsLinksStayInRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{filepath.Join(root, "README.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			docs = append(docs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(data)) {
			checked++
			if msg := checkLink(root, doc, l.target); msg != "" {
				rel, _ := filepath.Rel(root, doc)
				t.Errorf("%s:%d: link %q: %s", rel, l.line, l.target, msg)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no links found: the link scanner is broken")
	}
}

// TestCheckLinkRefuses makes sure the checker itself catches what it must.
func TestCheckLinkRefuses(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(root, "README.md")
	other := filepath.Join(root, "docs", "a.md")
	if err := os.WriteFile(other, []byte("# A title\n\n## 2. `.strata.yaml`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "See [spec](../shared/SPEC.md), [abs](/work/shared/SPEC.md), [home](~/x.md),\n" +
		"[file](file:///etc/passwd), [gone](docs/missing.md), [bad anchor](docs/a.md#nope),\n" +
		"[up and back](docs/../../outside/x.md)\n[ref]: ../ref.md\n" +
		"Fine: [a](docs/a.md), [t](docs/a.md#a-title), [y](docs/a.md#2-strata-yaml-not), [web](https://example.com),\n" +
		"`[code](../code.md)`\n\n```\n[fenced](../fenced.md)\n```\n"
	var bad, good []string
	for _, l := range markdownLinks(doc) {
		if checkLink(root, readme, l.target) != "" {
			bad = append(bad, l.target)
		} else {
			good = append(good, l.target)
		}
	}
	wantBad := []string{"../shared/SPEC.md", "/work/shared/SPEC.md", "~/x.md", "file:///etc/passwd",
		"docs/missing.md", "docs/a.md#nope", "docs/../../outside/x.md", "../ref.md", "docs/a.md#2-strata-yaml-not"}
	wantGood := []string{"docs/a.md", "docs/a.md#a-title", "https://example.com"}
	if fmt.Sprint(bad) != fmt.Sprint(wantBad) {
		t.Errorf("refused %q, want %q", bad, wantBad)
	}
	if fmt.Sprint(good) != fmt.Sprint(wantGood) {
		t.Errorf("accepted %q, want %q", good, wantGood)
	}
	if got := headingAnchor("2. `.strata.yaml`"); got != "2-stratayaml" {
		t.Errorf("anchor = %q, want 2-stratayaml", got)
	}
}

type mdLink struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s+(<[^>]*>|\S+)`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
)

// outsideFences returns doc's lines by index, nil for a line inside a code
// fence or a fence line itself.
func outsideFences(doc string) []*string {
	lines := strings.Split(doc, "\n")
	out := make([]*string, len(lines))
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			out[i] = &lines[i]
		}
	}
	return out
}

// markdownLinks lists the targets of inline links, images and reference
// definitions, outside code fences and code spans.
func markdownLinks(doc string) []mdLink {
	var out []mdLink
	for i, line := range outsideFences(doc) {
		if line == nil {
			continue
		}
		line := codeSpan.ReplaceAllString(*line, "")
		for _, re := range []*regexp.Regexp{inlineLink, refDef} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				out = append(out, mdLink{target: strings.Trim(m[1], "<>"), line: i + 1})
			}
		}
	}
	return out
}

// checkLink says what is wrong with a link target of the Markdown file doc,
// or "" when it is fine: a web link, an anchor of doc, or a file of the
// repository at root that exists (with the heading the anchor names).
func checkLink(root, doc, target string) string {
	if u, err := url.Parse(target); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		if u.Scheme == "file" {
			return "a file: URL points outside the repository"
		}
		return "" // http, https, mailto: not a path
	}
	file, anchor, _ := strings.Cut(target, "#")
	if file == "" {
		file = filepath.Base(doc)
		if anchor == "" {
			return "empty link"
		}
	}
	if strings.HasPrefix(file, "/") || strings.HasPrefix(file, "~") || filepath.IsAbs(file) {
		return "an absolute path: documents must link only inside the repository"
	}
	abs := filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "leaves the repository: documents must stand alone"
	}
	data, err := os.ReadFile(abs)
	if st, serr := os.Stat(abs); serr == nil && st.IsDir() {
		if anchor != "" {
			return "an anchor into a directory"
		}
		return ""
	}
	if err != nil {
		return "no such file in the repository"
	}
	if anchor != "" && strings.HasSuffix(abs, ".md") && !hasAnchor(string(data), anchor) {
		return "no heading with this anchor in " + filepath.ToSlash(rel)
	}
	return ""
}

// hasAnchor reports whether a Markdown document has a heading whose
// GitHub-style anchor is anchor.
func hasAnchor(doc, anchor string) bool {
	seen := map[string]int{}
	for _, l := range outsideFences(doc) {
		if l == nil || !strings.HasPrefix(*l, "#") {
			continue
		}
		line := *l
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := headingAnchor(text)
		if n := seen[a]; n > 0 {
			a = fmt.Sprintf("%s-%d", a, n)
		}
		seen[headingAnchor(text)]++
		if a == anchor {
			return true
		}
	}
	return false
}

// headingAnchor is the anchor GitHub gives a heading: lower case, spaces
// to hyphens, punctuation other than "-" and "_" dropped.
func headingAnchor(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
