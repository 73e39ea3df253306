package validate

import (
	"bytes"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/strata-dev/strata/schemas"
)

// builtinLoader gives the compiler of the built-in schemas each one when it
// is first needed (compiled, or named by another's $ref), read from the
// binary; every other URL is refused, as denyLoader does. Parsing all of
// them whenever a Validator was made cost every command that opens the
// repository (a hook call included) ~0.3 ms, for a schema it mostly never
// used.
type builtinLoader struct{}

func (builtinLoader) Load(loc string) (any, error) {
	for _, name := range schemas.Names() {
		if schemas.ID(name) != loc {
			continue
		}
		b, _ := schemas.Get(name)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("built-in schema %s: %w", name, err)
		}
		return doc, nil
	}
	return denyLoader{}.Load(loc)
}
