//! What every fuzz target does with its input.

use grammar_patch::apply::{FileTree, MemTree};
use grammar_patch::formats::Format;
use grammar_patch::{run_with, Mode, Options};

/// Lints `data` as a patch of `format`, strict and tolerant.
#[allow(dead_code)]
pub fn parse(format: Format, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for tolerant in [false, true] {
        let out = run_with(text, Some(format), Mode::Lint, None, None, Options { tolerant, ..Options::default() });
        let _ = out.exit_code();
    }
}

/// `data` is a format selector byte, then two target files and a patch,
/// separated by NUL bytes: the patch is applied to an in-memory tree holding
/// `a.txt` and `src/b.py`. A rejected patch must leave the tree unchanged.
#[allow(dead_code)]
pub fn apply(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else { return };
    let mut parts = rest.splitn(3, |&b| b == 0);
    let (Some(a), Some(b), Some(patch)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let (Ok(a), Ok(b), Ok(patch)) = (
        std::str::from_utf8(a),
        std::str::from_utf8(b),
        std::str::from_utf8(patch),
    ) else {
        return;
    };
    let format = match selector % 6 {
        0 => None,
        1 => Some(Format::Udiff),
        2 => Some(Format::Codex),
        3 => Some(Format::Repopatch),
        4 => Some(Format::Ap),
        _ => Some(Format::Searchreplace),
    };
    let tolerant = selector & 0x80 != 0;
    let before = MemTree::default().with_file("a.txt", a).with_file("src/b.py", b);
    let mut tree = before.clone();
    let out = match format {
        // Detected as a request reads it: OpenAI's apply_patch_call JSON too.
        None => match grammar_patch::Request::new(patch).tolerant(tolerant).run_in(&mut tree) {
            Ok(out) => out,
            Err(_) => return assert_eq!(tree, before, "a refused request changed the tree"),
        },
        Some(_) => run_with(
            patch,
            format,
            Mode::Apply { dry_run: false },
            Some(&mut tree as &mut dyn FileTree),
            Some(std::path::Path::new("/root")),
            Options { tolerant, ..Options::default() },
        ),
    };
    if !out.ok() {
        assert_eq!(tree, before, "a rejected patch changed the tree");
    }
}
