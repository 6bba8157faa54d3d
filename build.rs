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

/// Stands for the patch ID in `$OUT_DIR/ap-bound.lark`, ap's export bound to
/// one ID (`grammar ap --id HEX8`), which the library fills in. So the
/// exporter, and with it `pest_meta` and pest's `std` feature, is needed
/// only here, not at run time (see `Cargo.toml`).
const AP_ID_SLOT: &str = "@PATCH_ID@";

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    println!("cargo:rustc-env=GP_AP_ID_SLOT={AP_ID_SLOT}");
    for (format, start) in GRAMMARS {
        let path = format!("grammars/{format}.pest");
        println!("cargo:rerun-if-changed={path}");
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut exports = vec![(format.to_string(), None)];
        if *format == "ap" {
            exports.push(("ap-bound".to_string(), Some(AP_ID_SLOT)));
        }
        for (name, id) in exports {
            match lark::export_with(&src, start, id) {
                Ok(text) => std::fs::write(format!("{out_dir}/{name}.lark"), text)
                    .expect("write Lark grammar"),
                Err(e) => panic!("{path}: cannot export to Lark: {e}"),
            }
        }
    }
}
