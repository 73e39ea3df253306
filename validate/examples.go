package validate

import (
	"bytes"

	"github.com/strata-dev/strata/state"
)

// DecodeDocs decodes a file's content as the documents it holds: one for
// JSON and YAML, one per non-empty line for JSONL. format "" means the
// format the name says; a name that says none is decoded as JSON. Problems
// are those Validate reports for a file that is not well-formed.
func DecodeDocs(path string, data []byte, format string) ([]any, state.Problems) {
	if format == "" {
		format = FormatOf(path)
	}
	switch format {
	case FormatYAML:
		doc, _, ps := decodeYAML(path, data)
		if ps.Invalid() {
			return nil, ps
		}
		return []any{doc}, nil
	case FormatJSONL:
		if ps := (&Validator{}).validateLines(path, data, nil); ps.Invalid() {
			return nil, ps
		}
		var docs []any
		for _, line := range bytes.Split(data, []byte("\n")) {
			if isBlank(line) {
				continue
			}
			doc, _, _ := decodeJSON(path, line)
			docs = append(docs, doc)
		}
		return docs, nil
	}
	doc, _, ps := decodeJSON(path, data)
	if ps.Invalid() {
		return nil, ps
	}
	return []any{doc}, nil
}

// CheckAgainst validates a file's content against a JSON Schema given as
// bytes (one that refers to nothing outside itself), as Validate checks a
// file against a schema file, without the built-in schemas' extra rules.
// It is how a schema inferred from examples is proved to accept them.
func CheckAgainst(schema []byte, path string, data []byte, format string) state.Problems {
	doc, _, ps := decodeJSON("schema", schema)
	if ps != nil {
		return state.Problems{{Path: path, Message: "schema " + ps[0].Error()}}
	}
	c := newCompiler()
	c.UseLoader(denyLoader{})
	const loc = "file:///strata/inferred.schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return state.Problems{{Path: path, Message: "schema is invalid: " + err.Error()}}
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return state.Problems{{Path: path, Message: "schema is invalid: " + err.Error()}}
	}
	if format == "" {
		format = FormatOf(path)
	}
	switch format {
	case FormatJSONL:
		return (&Validator{}).validateLines(path, data, &compiled{schema: sch})
	case FormatYAML:
		doc, loc, ps := decodeYAML(path, data)
		if ps.Invalid() {
			return ps
		}
		ps = check(path, doc, loc, sch, "", len(data))
		sortProblems(ps)
		return ps
	}
	doc, l, ps := decodeJSON(path, data)
	if ps != nil {
		return ps
	}
	ps = check(path, doc, l, sch, "", len(data))
	sortProblems(ps)
	return ps
}
