// The pest grammars `build.rs` exports as Lark, each with its start rule:
// `grammars/<name>.pest` → `$OUT_DIR/<name>.lark`. Read by build.rs
// (`include!`) and by the registry's test, so the two lists are one.

/// Each pest grammar's file stem and start rule.
pub const PEST_GRAMMARS: &[(&str, &str)] = &[
    ("udiff", "patch"),
    ("codex", "patch"),
    ("repopatch", "patchset"),
    ("searchreplace", "message"),
];
