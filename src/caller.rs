//! Who made a request, so that a hint names an option the way that caller
//! gives it: `--tolerant` on the command line, `"tolerant": true` in a tool
//! call (MCP, or a JSON tool call), `tolerant=True` in Python. Diagnostics
//! are written in the command line's words; [`Caller::reword`] is the only
//! place that knows the others, and it changes only those phrases.

use crate::error::Diagnostic;

/// Who made a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Caller {
    /// The `grammar-patch` command line (the words diagnostics are written in).
    #[default]
    CommandLine,
    /// A tool call: the MCP server's tools, whose arguments are JSON fields.
    ToolCall,
    /// The Python package's functions, whose options are keyword arguments.
    Python,
}

/// The option phrases of the command line that a hint or message may use,
/// each with its spelling in a tool call and in Python. `{}` stands for a
/// format's name.
const PHRASES: &[(&str, &str, &str)] = &[
    (
        "apply it with `--format {}` (or no --format)",
        "call again with `\"format\": \"{}\"` (or `\"auto\"`)",
        "call again with `format=\"{}\"` (or `format=\"auto\"`)",
    ),
    (
        "or pass --format",
        "or give its `\"format\"`",
        "or pass its `format=`",
    ),
    (
        "apply with --tolerant",
        "call again with `\"tolerant\": true`",
        "call again with `tolerant=True`",
    ),
    (
        "give the tree the patch applies to (--root)",
        "give the tree the patch applies to (the server's root)",
        "give the tree the patch applies to (`root`)",
    ),
    (
        "--diff shows changes to a tree: give --root",
        "`diff` shows changes to a tree, and this call has none",
        "`diff=True` shows changes to a tree: give `root`",
    ),
];

impl Caller {
    /// `d` with its message, hint and notes in this caller's words.
    pub fn reword(self, d: &mut Diagnostic) {
        if self == Caller::CommandLine {
            return;
        }
        d.message = self.words(&d.message);
        if let Some(hint) = &mut d.hint {
            *hint = self.words(hint);
        }
        for note in &mut d.notes {
            *note = self.words(note);
        }
    }

    /// `text` with every command-line phrase a hint may use (an option to
    /// give) in this caller's words.
    pub fn words(self, text: &str) -> String {
        let mut text = text.to_string();
        for (cli, tool, python) in PHRASES {
            let theirs = match self {
                Caller::CommandLine => return text,
                Caller::ToolCall => tool,
                Caller::Python => python,
            };
            text = replace_phrase(&text, cli, theirs);
        }
        text
    }
}

/// `text` with each occurrence of `from` (where `{}` matches a format's
/// name) written as `to` (with the same name for its `{}`).
fn replace_phrase(text: &str, from: &str, to: &str) -> String {
    let (head, tail) = from.split_once("{}").unwrap_or((from, ""));
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(head) {
        let after = &rest[at + head.len()..];
        let name_len = if from.contains("{}") {
            after
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(after.len())
        } else {
            0
        };
        let (name, after_name) = after.split_at(name_len);
        let Some(after_tail) = after_name.strip_prefix(tail) else {
            out.push_str(&rest[..at + head.len()]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..at]);
        out.push_str(&to.replace("{}", name));
        rest = after_tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_caller_reads_its_own_option_names() {
        let format = "rewrite it, or apply it with `--format udiff` (or no --format)";
        let tolerant = "delete it (or apply with --tolerant)";
        let cases = [
            (Caller::CommandLine, format, format),
            (
                Caller::ToolCall,
                format,
                "rewrite it, or call again with `\"format\": \"udiff\"` (or `\"auto\"`)",
            ),
            (
                Caller::Python,
                format,
                "rewrite it, or call again with `format=\"udiff\"` (or `format=\"auto\"`)",
            ),
            (
                Caller::ToolCall,
                tolerant,
                "delete it (or call again with `\"tolerant\": true`)",
            ),
            (
                Caller::Python,
                tolerant,
                "delete it (or call again with `tolerant=True`)",
            ),
            // Text that only looks like a phrase is left as it is.
            (
                Caller::ToolCall,
                "apply it with `--format udiff` and more",
                "apply it with `--format udiff` and more",
            ),
        ];
        for (caller, text, want) in cases {
            assert_eq!(caller.words(text), want, "{caller:?}");
        }
    }

    /// Every message or hint the code writes with a command-line option
    /// is one of the phrases a caller rewords: no `--option` reaches a
    /// tool call. Not options: a patch's own lines (`--- a/PATH`, `diff
    /// --git`), git's options (`git diff --binary`) and whole commands to
    /// run (`grammar-patch recover --root DIR`). The command line's own
    /// files (`main.rs`, `mcp.rs`'s start-up) and its tool-call unpacking
    /// speak only to the command line.
    #[test]
    fn every_option_named_in_a_message_is_a_known_phrase() {
        let command_line_only = ["--format says"];
        let mut unknown = vec![];
        for file in walk(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src"
        ))) {
            let name = file.file_name().unwrap().to_str().unwrap();
            if ["main.rs", "mcp.rs", "caller.rs"].contains(&name) {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                let command = ["grammar-patch ", "`git "].iter().any(|c| line.contains(c));
                if !line.contains('"') || command {
                    continue;
                }
                for (i, _) in line.match_indices("--") {
                    let option = !line[..i].ends_with("diff ")
                        && line[i + 2..].starts_with(|c: char| c.is_ascii_lowercase());
                    if !option || command_line_only.iter().any(|p| line.contains(p)) {
                        continue;
                    }
                    let known = PHRASES.iter().any(|(cli, _, _)| {
                        line.contains(cli.split("{}").next().unwrap().trim_end_matches('`'))
                    });
                    if !known {
                        unknown.push(format!("{name}: {}", line.trim()));
                    }
                }
            }
        }
        assert!(unknown.is_empty(), "{unknown:#?}");
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = vec![];
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
        out
    }
}
