package config

// Template is the commented .strata.yaml that `strata init` writes. Every
// setting is commented out, so the file documents the defaults without
// overriding them.
const Template = `# strata configuration — https://github.com/strata-dev/strata
# Every setting below is commented out and shows its default.
version: 1

# Kept files larger than this are refused and not stored.
# max_size: 10MB

# Your own rules, consulted before the built-in ones below; the first match wins.
# A glob uses path.Match syntax per path segment ("*" never crosses "/").
# schema: a built-in schema name (strata schema list), "json" (well-formed
# JSON only), "yaml" (well-formed YAML only), or a repo-relative path to your
# own JSON Schema file. ignore: true stops keeping matching files.
files:
#  - glob: .claude/workflow-state.json
#    schema: schemas/my-workflow-state.schema.json
#  - glob: .claude/scratch-*.json
#    ignore: true
#
# Built-in rules:
#  - {glob: .claude/workflow-state.json,           class: workflow-state,      schema: workflow-state}
#  - {glob: .claude/initiative.json,               class: initiative,          schema: initiative}
#  - {glob: .claude/interview-state.json,          class: interview-state,     schema: interview-state}
#  - {glob: .claude/delegation-log.json,           class: delegation-log,      schema: delegation-log}
#  - {glob: .claude/*.json,                        class: claude-json,         schema: json}
#  - {glob: PhaseOutputs/*/phase-*.json,           class: phase-output,        schema: phase-output}
#  - {glob: PhaseOutcomes/*/*-resolution-*.yaml,   class: decision-resolution, schema: decision-resolution}
#  - {glob: PhaseOutcomes/*/*.yaml,                class: phase-outcome,       schema: phase-outcome}

# L2 memory: by default the first that exists of .claude/memory/MEMORY.md,
# .claude/MEMORY.md, MEMORY.md and Claude Code's auto-memory file
# (~/.claude/projects/<key>/memory/MEMORY.md). A file named MEMORY.md only
# (any case; not in .claude/agents, .claude/commands or another folder of
# .claude but .claude/memory): strata writes its workflow lines into it.
# memory: .claude/memory/MEMORY.md

# The auto-memory file's history stays on the local ref refs/strata/home/state;
# It is synced only when you ask: strata sync --home, or git config strata.syncHome true
# (sync_home here is not honoured: this file may come with the repository).

# L3 graph of the MCP memory server: $MEMORY_FILE_PATH when set, else this.
# A JSON Lines (.jsonl) file only, or memory.json: strata writes entities into it.
# graph: .claude/memory.jsonl
`
