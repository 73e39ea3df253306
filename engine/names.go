package engine

import (
	"github.com/strata-dev/strata/config"
	"github.com/strata-dev/strata/phase"
	"github.com/strata-dev/strata/schemas"
)

// The names the command line needs from the packages behind the engine, so
// that cmd depends on the engine's surface rather than on each of them.

type (
	// Kept is a path strata keeps, with its class and schema.
	Kept = config.Kept
	// ConfigError is a mistake in .strata.yaml, with its file:line.
	ConfigError = config.Error
	// ConfigReadError is a .strata.yaml that is there but cannot be read.
	ConfigReadError = config.ReadError
	// PendingDecision is a pending decision of a Phase Outcome.
	PendingDecision = phase.Decision
	// Session is a phase-output session and its tiers.
	Session = phase.Session
	// Recovery is where a phase-output session stands.
	Recovery = phase.Recovery
	// TierFile is one phase-output file as a tier of its session.
	TierFile = phase.TierFile
)

// ConfigFile is the name of strata's configuration file at the root.
const ConfigFile = config.FileName

// RuleEdit is .strata.yaml with rules added, checked but not yet written.
type RuleEdit = config.RuleEdit

// PlanRules plans {glob, schema} as the first rule of root's .strata.yaml
// for each glob, keeping its comments; nothing is written until Write.
func PlanRules(root string, globs []string, schema string) (*RuleEdit, error) {
	return config.PlanRules(root, globs, schema)
}

// RuleLine is the rule {glob, schema} as one line of .strata.yaml, each
// value YAML-quoted, as PlanRules writes it; an error for a name that is
// not UTF-8, which no YAML rule can name.
func RuleLine(glob, schema string) (string, error) { return config.RuleLine(glob, schema) }

// LiteralGlob is a glob that matches the path rel and no other.
func LiteralGlob(rel string) string { return config.LiteralGlob(rel) }

// Sessions groups phase-output files into sessions.
func Sessions(files []TierFile) []Session { return phase.Sessions(files) }

// Recover is where session stands: its last contiguous completed tier from
// tier from on, its gaps and the next tier.
func Recover(session string, files []TierFile, from int) Recovery {
	return phase.Recover(session, files, from)
}

// SchemaNames lists the built-in schemas.
func SchemaNames() []string { return schemas.Names() }

// SchemaID is a built-in schema's $id.
func SchemaID(name string) string { return schemas.ID(name) }

// Schema returns a built-in schema's bytes.
func Schema(name string) ([]byte, bool) { return schemas.Get(name) }

// ExportSchemas writes every built-in schema into dir.
func ExportSchemas(dir string) error { return schemas.Export(dir) }
