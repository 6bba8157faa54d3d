//! Exports every grammar in `grammars/` as Lark into `$OUT_DIR/<format>.lark`,
//! and builds ap's LR parser from `grammars/ap.lalrpop`. The translators
//! are the workspace's `pest-lark` and `lalrpop-lark` crates, so the build
//! fails, naming the rule, when a grammar uses something Lark cannot say.

use lalrpop_lark as lr_lark;
use pest_lark as lark;

// `PEST_GRAMMARS`: each pest grammar's file stem and start rule, the list
// the format registry checks itself against.
include!("src/formats/grammars.rs");

/// Stands for the patch ID in `$OUT_DIR/ap-bound.lark`, ap's export bound to
/// one ID (`grammar ap --id HEX8`), which the library fills in. So the
/// exporter, and with it `pest_meta` and pest's `std` feature, is needed
/// only here, not at run time (see `Cargo.toml`).
const AP_ID_SLOT: &str = "@PATCH_ID@";

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    println!("cargo:rerun-if-changed=grammars/ap.lalrpop");
    lalrpop::Configuration::new()
        .set_out_dir(&out_dir)
        .process_file("grammars/ap.lalrpop")
        .expect("grammars/ap.lalrpop: an LR(1) grammar LALRPOP builds");
    let ap = std::fs::read_to_string("grammars/ap.lalrpop").expect("grammars/ap.lalrpop");
    for (name, id) in [("ap", None), ("ap-bound", Some(AP_ID_SLOT))] {
        match lr_lark::export(&ap, "Patch", id) {
            Ok(text) => {
                std::fs::write(format!("{out_dir}/{name}.lark"), text).expect("write Lark grammar")
            }
            Err(e) => panic!("grammars/ap.lalrpop: cannot export to Lark: {e}"),
        }
    }
    println!("cargo:rustc-env=GP_AP_ID_SLOT={AP_ID_SLOT}");
    println!("cargo:rerun-if-changed=src/formats/grammars.rs");
    for (format, start) in PEST_GRAMMARS {
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
