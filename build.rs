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
    order_code();
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

/// Has the linker lay out the functions a typical call runs
/// (`tools/hot-symbols.txt`, written by `tools/hot-symbols.sh`) together
/// at the start of the code: the kernel maps a binary's code 64 KiB around
/// each page a call touches, so scattered they kept most of the code
/// resident. Only where the linker is known to be LLD, which takes the list
/// and skips a name no longer defined: a release build for
/// x86_64-unknown-linux-gnu by Rust 1.90 or later (LLD is its default
/// linker there) with no linker of the user's choosing. Anywhere else the
/// build is the same but for the order of its code.
fn order_code() {
    println!("cargo:rerun-if-changed=tools/hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    // A linker named in the configuration, or any link flag (`-C linker`,
    // `-C link-arg=-fuse-ld=...`) in the flags.
    let chosen_linker =
        !var("RUSTC_LINKER").is_empty() || var("CARGO_ENCODED_RUSTFLAGS").contains("link");
    if var("PROFILE") != "release"
        || var("TARGET") != "x86_64-unknown-linux-gnu"
        || chosen_linker
        || !lld_by_default(&var("RUSTC"))
    {
        return;
    }
    let list = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("tools/hot-symbols.txt");
    // `-Wl,` splits its argument at commas.
    if list.is_file() && !list.to_string_lossy().contains(',') {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            list.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether `rustc` (a path) is Rust 1.90 or later, which links
/// x86_64-unknown-linux-gnu with its own LLD.
fn lld_by_default(rustc: &str) -> bool {
    let Ok(out) = std::process::Command::new(rustc).arg("-V").output() else {
        return false;
    };
    let version = String::from_utf8_lossy(&out.stdout);
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let mut parts = version
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (1, 90)
}
