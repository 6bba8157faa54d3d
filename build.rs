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
    let ap = std::fs::read_to_string("grammars/ap.pest").expect("grammars/ap.pest");
    match lark::export_with(&ap, "patch", Some(AP_ID_SLOT)) {
        Ok(text) => {
            std::fs::write(format!("{out_dir}/ap-bound.lark"), text).expect("write Lark grammar")
        }
        Err(e) => panic!("grammars/ap.pest: cannot export to Lark: {e}"),
    }
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
