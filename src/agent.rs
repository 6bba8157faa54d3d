//! What a model needs to write a format: short instructions with a worked
//! example ([`prompt`]), and ready tool definitions for OpenAI and Anthropic
//! ([`tool`]). Every example is a real patch of a real file, and the tests
//! apply it (and run it through the format's Lark grammar in llguidance).

use serde_json::{json, Value};

use crate::formats::Format;

/// A worked example: `patch` turns `before` into `after` at `path`.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The file the example edits.
    pub path: &'static str,
    /// Its text before.
    pub before: &'static str,
    /// The patch, in the example's format.
    pub patch: &'static str,
    /// Its text after.
    pub after: &'static str,
}

const BEFORE: &str = "def greet(name):\n    return \"Hello, \" + name\n\n\ndef main():\n    print(greet(\"world\"))\n";
const AFTER: &str = "def greet(name):\n    return f\"Hello, {name}!\"\n\n\ndef main():\n    print(greet(\"world\"))\n    print(\"done\")\n";

/// The patch ID of the ap example; [`tool`] puts the tool's own ID in its place.
pub const EXAMPLE_ID: &str = "5e7a91c2";

/// A fresh random ap patch ID: 8 lowercase hex digits.
pub fn random_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:08x}", h.finish() as u32)
}

/// Whether `id` is a valid ap patch ID: 8 hex digits, as the parser reads
/// a header (either case; the ID is then used exactly as given).
pub fn is_patch_id(id: &str) -> bool {
    id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The format's worked example.
pub fn example(format: Format) -> Example {
    let patch = match format {
        Format::Udiff => concat!(
            "--- a/greet.py\n",
            "+++ b/greet.py\n",
            "@@ -1,6 +1,7 @@\n",
            " def greet(name):\n",
            "-    return \"Hello, \" + name\n",
            "+    return f\"Hello, {name}!\"\n",
            " \n",
            " \n",
            " def main():\n",
            "     print(greet(\"world\"))\n",
            "+    print(\"done\")\n",
        ),
        Format::Codex => concat!(
            "*** Begin Patch\n",
            "*** Update File: greet.py\n",
            "@@ def greet(name):\n",
            "-    return \"Hello, \" + name\n",
            "+    return f\"Hello, {name}!\"\n",
            "@@ def main():\n",
            "     print(greet(\"world\"))\n",
            "+    print(\"done\")\n",
            "*** End Patch\n",
        ),
        Format::Repopatch => concat!(
            "PATCHSET\n",
            "PATCH greet.py\n",
            "REPLACE\n",
            "-     return \"Hello, \" + name\n",
            "---\n",
            ".     return f\"Hello, {name}!\"\n",
            "INSERT AFTER\n",
            "-     print(greet(\"world\"))\n",
            "---\n",
            ".     print(\"done\")\n",
            "ENDPATCH\n",
            "ENDPATCHSET\n",
        ),
        Format::Ap => concat!(
            "# Summary: greet with an f-string, and print \"done\" after the greeting.\n",
            "5e7a91c2 AP 3.2\n",
            "\n",
            "5e7a91c2 FILE\n",
            "greet.py\n",
            "\n",
            "5e7a91c2 REPLACE\n",
            "5e7a91c2 snippet\n",
            "    return \"Hello, \" + name\n",
            "5e7a91c2 content\n",
            "    return f\"Hello, {name}!\"\n",
            "\n",
            "5e7a91c2 INSERT_AFTER\n",
            "5e7a91c2 snippet\n",
            "    print(greet(\"world\"))\n",
            "5e7a91c2 content\n",
            "    print(\"done\")\n",
            "\n",
            "5e7a91c2 END\n",
        ),
        Format::Searchreplace => concat!(
            "greet.py\n",
            "<<<<<<< SEARCH\n",
            "def greet(name):\n",
            "    return \"Hello, \" + name\n",
            "=======\n",
            "def greet(name):\n",
            "    return f\"Hello, {name}!\"\n",
            ">>>>>>> REPLACE\n",
            "<<<<<<< SEARCH\n",
            "    print(greet(\"world\"))\n",
            "=======\n",
            "    print(greet(\"world\"))\n",
            "    print(\"done\")\n",
            ">>>>>>> REPLACE\n",
        ),
    };
    Example {
        path: "greet.py",
        before: BEFORE,
        patch,
        after: AFTER,
    }
}

/// The generation rules of a format, short.
fn rules(format: Format) -> &'static str {
    match format {
        Format::Udiff => "\
- For each file: `--- a/PATH` then `+++ b/PATH` (`--- /dev/null` to create a file, \
`+++ /dev/null` to delete one). A rename: `diff --git a/OLD b/NEW`, `rename from OLD`, `rename to NEW`.
- Each hunk: `@@ -START,COUNT +START,COUNT @@`, then its lines: ` ` (space) unchanged, \
`-` removed, `+` added. An empty line of the file is a single space.
- Copy unchanged and removed lines exactly from the file, indentation included. Give about \
3 unchanged lines around each change; if that text occurs more than once in the file, give more.
- Line numbers are hints; the text decides. Hunks of a file go in file order and never overlap; \
one `---`/`+++` pair per file.",
        Format::Codex => "\
- The patch is `*** Begin Patch`, then file operations, then `*** End Patch`.
- `*** Add File: PATH`, then every line of the new file prefixed with `+`.
- `*** Delete File: PATH`.
- `*** Update File: PATH` (optionally `*** Move to: NEW_PATH`), then hunks. A hunk starts \
with `@@` or with `@@ LINE`, where LINE is a line of the file above the change that occurs \
only once (a function or class header); its lines are ` ` unchanged, `-` removed, `+` added.
- Copy unchanged and removed lines exactly, indentation included; about 3 unchanged lines \
around each change. Hunks go in file order; a hunk without `@@ LINE` must match exactly once \
after the previous hunk, so when code repeats, use `@@ LINE`.
- `*** End of File` after a hunk that must end at the end of the file.",
        Format::Repopatch => "\
- The patch is `PATCHSET`, then for each file `PATCH path/to/file`, its operations and \
`ENDPATCH`, then `ENDPATCHSET`. Every keyword stands alone on its line.
- Operations: `REPLACE` (old block, `---`, new block), `INSERT BEFORE` / `INSERT AFTER` \
(anchor block, `---`, lines to insert), `DELETE` (old block only). `CREATEFILE` (new lines \
only) and `DELETEFILE` (nothing) stand alone in their `PATCH`.
- An old/anchor block is lines copied exactly from the file, each as `- ` (dash, space) and \
the line; a new block is lines to write, each as `. ` (dot, space) and the line. A blank \
line is `- ` or `. ` with nothing after. Never `.` in an old block, never `-` in a new one.
- Every old/anchor block must occur exactly once in the file as the earlier operations leave \
it: add lines until it does. Operations apply in order.
- No line numbers, comments, markdown or diff lines inside the PATCHSET.",
        Format::Ap => "\
- Start with `#` comment lines (a one-line summary), then the header `<ID> AP 3.2`. <ID> is 8 \
random lowercase hex digits; every directive line starts with that ID and a space, and no \
other line may.
- Each file: `<ID> FILE`, then its path on the next line; then its modifications in file \
order, each an action line `<ID> REPLACE`, `<ID> INSERT_AFTER`, `<ID> INSERT_BEFORE` or \
`<ID> DELETE` followed by values: `<ID> snippet` and the lines to find (whole lines copied \
from the file; indentation and blank lines do not matter), `<ID> content` and the new lines \
(not for DELETE), optionally `<ID> anchor` (a line above the target that occurs once) and \
`<ID> snippet_tail` (the last lines of a range that starts at the snippet).
- A snippet must occur once in the file, or be the first match after its anchor; \
modifications of one file apply top to bottom, each searched after the previous one.
- `<ID> CREATE` + `<ID> content` makes a new file; `<ID> RECREATE` + content rewrites one; \
`<ID> DELETE` alone in its `FILE` block deletes the file; `<ID> RENAME` + a path renames it.
- Options after the values: `<ID> include_leading_blank_lines N`, \
`<ID> include_trailing_blank_lines N`, `<ID> scope_end 1` (the whole block the snippet's line opens).
- End the patch with `<ID> END`.",
        Format::Searchreplace => "\
- For each file: its path alone on a line (relative to the project root), then one or more \
blocks. A block is `<<<<<<< SEARCH`, the lines to find, `=======`, the lines to put in their \
place, `>>>>>>> REPLACE`, each marker alone on its line.
- The SEARCH lines are copied exactly from the file, whole lines, indentation included, and \
must occur exactly once in it: add lines above or below until they do. Keep blocks short: \
the lines that change and a few around them.
- Blocks of one file apply in order, each to the file as the blocks before it left it.
- To create a file, write its path and a block with an empty SEARCH section and the whole \
text as the REPLACE section. To delete lines, leave the REPLACE section empty.
- No line numbers, no `...` for skipped lines, no code fences around the blocks.",
    }
}

const ERRORS: &str = "\
A patch is applied whole or not at all. When it is refused you get a JSON error with a \
`code` (`syntax_error`, `context_not_found`, `ambiguous_context`, `file_not_found`, \
`file_exists`, `path_escape`, ...), a `message`, the `patch_line` and a `hint` (for example \
the lines of the file nearest to your text): fix the patch as the hint says and send all of \
it again.";

/// Instructions for a system prompt: the rules and a worked example.
pub fn prompt(format: Format) -> String {
    let ex = example(format);
    format!(
        "# Editing files with patches: {describe}\n\n\
         Write every change as one patch in this format, and send the patch text alone \
         (no prose, no code fences).\n\n{rules}\n\n\
         ## Example\n\nThe file `{path}`:\n\n```\n{before}```\n\n\
         The patch that changes its greeting and prints `done` after it:\n\n```\n{patch}```\n\n\
         ## Errors\n\n{ERRORS}\n",
        describe = format.describe(),
        rules = rules(format),
        path = ex.path,
        before = ex.before,
        patch = ex.patch,
    )
}

/// A tool description: what the tool does, the format in a few lines, one
/// example, and what comes back. For ap, `id` is the patch ID to teach.
pub fn description(format: Format, id: Option<&str>) -> String {
    let ex = example(format);
    let text = format!(
        "Apply a patch to the files of the workspace, written in {describe}. \
         Paths are relative to the workspace root.\n\n{rules}\n\nExample (edits `{path}`):\n{patch}\n{ERRORS}",
        describe = format.describe(),
        rules = rules(format),
        path = ex.path,
        patch = ex.patch,
    );
    match id {
        Some(id) => text
            .replace(EXAMPLE_ID, id)
            .replace(
                "<ID> is 8 random lowercase hex digits",
                &format!("the ID of this tool's patches is always `{id}`"),
            )
            .replace("<ID>", id),
        None => text,
    }
}

/// Whose tool-definition conventions to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// An OpenAI Responses custom tool whose input is constrained by the
    /// format's Lark grammar.
    OpenAi,
    /// The same custom tool in the shape Chat Completions takes it
    /// (`{"type": "custom", "custom": {…}}`).
    OpenAiChat,
    /// An Anthropic tool whose `patch` string argument carries the patch.
    Anthropic,
}

/// The tool name a definition gets unless told otherwise. OpenAI also has
/// a built-in tool *type* called `apply_patch` (its own V4A format); a
/// custom tool of the same name is a different tool, which `--name` can
/// rename.
pub const DEFAULT_TOOL_NAME: &str = "apply_patch";

/// Whether `name` is a tool name every provider takes: 1 to 64 ASCII
/// letters, digits, `_` or `-`.
pub fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The tool definition for `format`, as the provider's API takes it, named
/// `name`. For ap, `id` is the patch ID the grammar and the description
/// are bound to; it must be a patch ID ([`is_patch_id`]).
pub fn tool(
    format: Format,
    provider: Provider,
    id: Option<&str>,
    name: &str,
) -> Result<Value, String> {
    let description = description(format, id);
    let grammar = format.lark_grammar_for(id)?;
    Ok(match provider {
        Provider::OpenAi => json!({
            "type": "custom",
            "name": name,
            "description": description,
            "format": {
                "type": "grammar",
                "syntax": "lark",
                "definition": grammar,
            },
        }),
        Provider::OpenAiChat => json!({
            "type": "custom",
            "custom": {
                "name": name,
                "description": description,
                "format": {
                    "type": "grammar",
                    "grammar": {
                        "definition": grammar,
                        "syntax": "lark",
                    },
                },
            },
        }),
        Provider::Anthropic => json!({
            "name": name,
            "description": description,
            "input_schema": {
                "type": "object",
                "properties": {
                    "patch": {
                        "type": "string",
                        "description": format!("The whole patch, in {}.", format.describe()),
                    },
                },
                "required": ["patch"],
                "additionalProperties": false,
            },
        }),
    })
}
