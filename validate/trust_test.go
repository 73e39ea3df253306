package validate

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/strata-dev/strata/schemas"
)

// TestBuiltinSchemasMatchMetaschema compiles every embedded schema with the
// metaschema check on, as New's compiler (which trusts them) does not.
func TestBuiltinSchemasMatchMetaschema(t *testing.T) {
	c := newCompiler()
	c.UseLoader(denyLoader{})
	for _, name := range schemas.Names() {
		b, _ := schemas.Get(name)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(schemas.ID(name), doc); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range schemas.Names() {
		if _, err := c.Compile(schemas.ID(name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The check is on: a schema the metaschema refuses does not compile.
	bad, _ := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(`{"type": 12}`)))
	if err := c.AddResource("strata:bad", bad); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("strata:bad"); err == nil {
		t.Error(`{"type": 12} compiled with the metaschema check on`)
	}
}
