//! Exports every grammar in `grammars/` as Lark into `$OUT_DIR/<format>.lark`.
//! The translator is the workspace's `pest-lark` crate, the one the library
//! uses, so the build fails, naming the rule, when a grammar uses something
//! Lark cannot say.

use pest_lark as lark;

/// Each format's grammar file stem and its start rule.
const GRAMMARS: &[(&str, &str)] = &[
    ("udiff", "patch"),
    ("codex", "patch"),
    ("repopatch", "patchset"),
    ("ap", "patch"),
];

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for (format, start) in GRAMMARS {
        let path = format!("grammars/{format}.pest");
        println!("cargo:rerun-if-changed={path}");
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        match lark::export(&src, start) {
            Ok(text) => std::fs::write(format!("{out_dir}/{format}.lark"), text)
                .expect("write Lark grammar"),
            Err(e) => panic!("{path}: cannot export to Lark: {e}"),
        }
    }
}
