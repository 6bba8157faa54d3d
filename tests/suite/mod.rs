/// Tool definitions, prompts and their worked examples.
mod agent;
/// Anthropic's text-editor commands: replies, refusals, the definition.
mod anthropic;
/// Fault injection: a failure at any commit step leaves the tree unchanged.
mod atomic;
/// The binary: exit codes, JSON shape, text output.
mod cli;
/// `convert`: every success fixture into every format, verified.
mod convert;
/// Every `tests/fixtures/<format>/<case>/`, applied on disk and in memory,
/// with the rendered diagnostics snapshotted.
mod fixtures;
/// No panics on arbitrary bytes or arbitrary patches.
mod fuzz;
/// The Lark exports: fresh, loadable in llguidance, and agreeing with pest.
mod grammar;
/// `-R`, line counts, `parse`, in-memory and batch applies.
mod habits;
/// `tools/replay.py` on a history built in the test: real tools' diffs of
/// every kind, identical to the peers' results or refused.
mod history;
/// Issue 41's attacks: forged journals, links a patch creates, special
/// files, `.git`, `kill -9` at every system call, the MCP byte stream.
mod hostile;
/// Files large enough for the work shared with a second thread.
mod large;
/// The MCP server, driven by rmcp's client over a child process.
mod mcp;
/// Our results against `git apply` on the same patches.
mod peers;
/// Attempts to leave the root, in every format.
mod safety;
/// RepoPatch's in-order semantics against a naive model.
mod sequential;
/// Grammar soundness: what the Lark export admits, the parser accepts.
mod soundness;
/// Tree copying and comparison shared by the modules below.
mod support;
/// The trust boundary under attack: hard links, swapped directories,
/// `kill -9`, concurrent applies, edits between read and write.
mod trust;
/// pest as vendored (`vendor/pest`): its two changes against a naive
/// model, and its diff file against its source.
mod vendored;
