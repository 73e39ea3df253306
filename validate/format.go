package validate

import "strings"

// The formats of a kept file's content.
const (
	FormatJSON  = "json"  // one JSON document
	FormatYAML  = "yaml"  // one YAML document
	FormatJSONL = "jsonl" // one JSON document per non-empty line
)

// Formats lists the formats a rule may name.
var Formats = []string{FormatJSON, FormatYAML, FormatJSONL}

// FormatOf is the format a file's name says: .yaml and .yml are YAML, .json
// JSON, .jsonl JSON lines; "" for any other name. Whatever schema checks a
// file, this (or a rule's format: key) decides how it is parsed.
func FormatOf(path string) string {
	switch {
	case strings.HasSuffix(path, ".yaml"), strings.HasSuffix(path, ".yml"):
		return FormatYAML
	case strings.HasSuffix(path, ".jsonl"):
		return FormatJSONL
	case strings.HasSuffix(path, ".json"):
		return FormatJSON
	}
	return ""
}
