package validate

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

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
func CheckAgainst(schema []byte, path string, data []byte, format string) (state.Problems, error) {
	doc, _, ps := decodeJSON("schema", schema)
	if ps != nil {
		return state.Problems{{Path: path, Message: "schema " + ps[0].Error()}}, nil
	}
	c := newCompiler()
	c.UseLoader(denyLoader{})
	const loc = "file:///strata/inferred.schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return state.Problems{{Path: path, Message: "schema is invalid: " + err.Error()}}, nil
	}
	sch, err := c.Compile(loc)
	var meta *jsonschema.SchemaValidationError
	if errors.As(err, &meta) && errors.Is(meta.Err, jsonschema.ErrTooCostly) {
		return nil, fmt.Errorf("the schema is too large to check against its metaschema: %w", ErrTooCostly)
	}
	if err != nil {
		return state.Problems{{Path: path, Message: "schema is invalid: " + err.Error()}}, nil
	}
	if format == "" {
		format = FormatOf(path)
	}
	var l *locator
	switch format {
	case FormatJSONL:
		return (&Validator{}).validateLines(path, data, &compiled{schema: sch}), nil
	case FormatYAML:
		doc, l, ps = decodeYAML(path, data)
	default:
		doc, l, ps = decodeJSON(path, data)
	}
	if ps.Invalid() {
		return ps, nil
	}
	steps := evaluations(len(data))
	err = sch.ValidateWithin(doc, steps)
	if errors.Is(err, jsonschema.ErrTooCostly) {
		return nil, fmt.Errorf("%s is too large to check against the schema: %w", path, ErrTooCostly)
	}
	ps = explain(path, l, "", steps, err)
	sortProblems(ps)
	return ps, nil
}

// ErrTooCostly is a check CheckAgainst stopped at the validator's
// evaluation budget: neither valid nor not.
var ErrTooCostly = jsonschema.ErrTooCostly
