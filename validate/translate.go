package validate

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/state"
)

var printer = message.NewPrinter(language.English)

// evaluationsPerByte is how many subschema evaluations one validation may
// make for each byte of the document, above jsonschema.MaxEvaluations: a
// valid workflow-state.json of 300 000 phases (3.9 MB) takes ~3 an item,
// a quarter of one a byte, and was refused by the fixed budget (attack26
// recheck F3). The work stays linear in the file's size, as decoding is.
const evaluationsPerByte = 2

// evaluations is the budget of subschema evaluations for a document of
// size bytes.
func evaluations(size int) int {
	return max(jsonschema.MaxEvaluations, evaluationsPerByte*size)
}

// check validates doc against sch and translates the validator's error tree
// into one problem per leaf cause, positioned by loc. base is the URL
// prefix of the user's schema files (file://ROOT/, "" for the built-in
// ones), which a schema location is named without, as compile errors are.
//
// size is the document's in bytes: the evaluations allowed grow with it
// (evaluations), so a large valid document is judged whatever its size
// while an exponential schema still stops on a small one.
func check(path string, doc any, loc *locator, sch *jsonschema.Schema, base string, size int) []state.Problem {
	steps := evaluations(size)
	return explain(path, loc, base, steps, sch.ValidateWithin(doc, steps))
}

// explain is check's answer for err, what validating doc within steps
// evaluations returned.
func explain(path string, loc *locator, base string, steps int, err error) []state.Problem {
	if err == nil {
		return nil
	}
	if errors.Is(err, jsonschema.ErrTooCostly) {
		// a small schema of nested anyOf/oneOf/$ref is exponential to
		// evaluate: it stops at the budget, in bounded time and memory
		return []state.Problem{{Path: path, Message: fmt.Sprintf("schema is too costly to evaluate for this file (over %d subschema evaluations: %d a byte of the file, at least %d); simplify its nesting of anyOf, oneOf and $ref, or its largest patterns", steps, evaluationsPerByte, jsonschema.MaxEvaluations)}}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []state.Problem{loc.at(path, "", lowerFirst(strings.TrimPrefix(err.Error(), "jsonschema: ")))}
	}
	// the findings first, then their positions: a large document is
	// scanned once for all of them
	type finding struct{ ptr, msg string }
	var found []finding
	seen := make(map[string]bool)
	add := func(ptr, msg string) {
		msg = oneLine(msg)
		if key := ptr + "\x00" + msg; !seen[key] {
			seen[key] = true
			found = append(found, finding{ptr, msg})
		}
	}
	// The tree is as deep as the schema's nesting of subschemas, which the
	// depth of the instance bounds (MaxDepth); a stack keeps it iterative.
	stack := []*jsonschema.ValidationError{ve}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if len(e.Causes) > 0 {
			for i := len(e.Causes) - 1; i >= 0; i-- {
				stack = append(stack, e.Causes[i])
			}
			continue
		}
		ptr := pointer(e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				add(ptr, "missing required property "+strconv.Quote(m))
			}
		case *kind.AdditionalProperties:
			for _, m := range k.Properties {
				add(pointer(slices.Concat(e.InstanceLocation, []string{m})), "property "+strconv.Quote(m)+" is not allowed")
			}
		case *kind.Group, *kind.Schema, *kind.Reference:
			// containers without causes carry no finding of their own
		case *kind.RefCycle:
			// a user schema's $ref loop: named by the schema's
			// repo-relative path, never the absolute file:// URL
			at := func(kw string) string {
				if kw == "" {
					return "/"
				}
				return kw
			}
			u := k.URL
			if base != "" {
				u = strings.TrimPrefix(u, base)
			}
			add(ptr, fmt.Sprintf("schema $ref cycle: both %s and %s resolve to %s", at(k.KeywordLocation1), at(k.KeywordLocation2), strconv.Quote(u)))
		default:
			add(ptr, describe(e.ErrorKind))
		}
	}
	if len(found) == 0 {
		return nil
	}
	ptrs := make([]string, len(found))
	for i, f := range found {
		ptrs[i] = f.ptr
	}
	loc.prepare(ptrs)
	ps := make([]state.Problem, len(found))
	for i, f := range found {
		ps[i] = loc.at(path, f.ptr, f.msg)
	}
	return ps
}

// describe phrases one leaf error as "what was expected", in strata's
// grammar: lowercase, no schema URLs, double-quoted JSON values.
func describe(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "value must be " + strings.Join(k.Want, " or ") + ", got " + k.Got
	case *kind.Enum:
		return "value must be " + oneOf(k.Want)
	case *kind.Const:
		return "value must be " + display(k.Want)
	case *kind.Format:
		want := k.Want
		if want == "date-time" {
			want = "date-time (RFC 3339, e.g. 2026-01-31T13:20:00Z)"
		}
		return "value must be a valid " + want + ", got " + display(k.Got)
	case *kind.Pattern:
		return "value " + display(k.Got) + " must match pattern " + k.Want
	case *kind.Minimum:
		return "value must be >= " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.Maximum:
		return "value must be <= " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.ExclusiveMinimum:
		return "value must be > " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.ExclusiveMaximum:
		return "value must be < " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.MinLength:
		if k.Want == 1 {
			return "value must not be empty"
		}
		return fmt.Sprintf("value must be at least %d characters long, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("value must be at most %d characters long, got %d", k.Want, k.Got)
	case *kind.MinItems:
		if k.Want == 1 {
			return "array must not be empty"
		}
		return fmt.Sprintf("array must have at least %d items, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("array must have at most %d items, got %d", k.Want, k.Got)
	case *kind.MinProperties:
		return fmt.Sprintf("object must have at least %d properties, got %d", k.Want, k.Got)
	case *kind.MaxProperties:
		return fmt.Sprintf("object must have at most %d properties, got %d", k.Want, k.Got)
	case *kind.UniqueItems:
		return fmt.Sprintf("items %d and %d are equal, want unique items", k.Duplicates[0], k.Duplicates[1])
	case *kind.FalseSchema:
		return "value is not allowed here"
	case *kind.MultipleOf:
		return "value must be a multiple of " + rat(k.Want) + ", got " + rat(k.Got)
	}
	return lowerFirst(k.LocalizedString(printer))
}

func oneOf(want []any) string {
	if len(want) == 1 {
		return display(want[0])
	}
	vals := make([]string, len(want))
	for i, w := range want {
		vals[i] = display(w)
	}
	return "one of " + strings.Join(vals, ", ")
}

// display renders a JSON value briefly: strings quoted (and cut past 60
// characters), containers as their kind.
func display(v any) string { return phase.Display(v) }

func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() && r.Num().BitLen() < 64 {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsUpper(r) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}
