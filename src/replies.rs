//! What each call of a provider's reply is answered with (OpenAI's
//! `apply_patch_call` items, Anthropic's `tool_use` blocks): the calls of
//! one reply apply together, so a failure is answered with its error for
//! the call it names, and for the others with why they were not applied
//! either. The providers' shapes are their modules'.

use crate::Outcome;

/// Each call's answer, by its id, in order (a call without an id is not
/// answered): `Ok` with what was done, `Err` with what to fix. `calls`
/// are each call's id and path; `kind` names a call in messages.
pub fn answers<'a>(
    calls: &[(Option<&'a str>, &str)],
    outcome: &Outcome,
    kind: &str,
) -> Vec<(&'a str, Result<String, String>)> {
    let error = outcome.diagnostics.iter().find(|d| d.is_error());
    let failing = error
        .and_then(|e| e.path.as_deref())
        .and_then(|p| calls.iter().position(|&(_, path)| path == p));
    calls
        .iter()
        .enumerate()
        .filter_map(|(i, &(id, path))| {
            let answer = match error {
                None => Ok(done(outcome, path)),
                Some(e) if failing.is_none_or(|f| f == i) => Err(explained(e)),
                Some(_) => {
                    let other = failing
                        .and_then(|f| calls[f].0)
                        .map_or(format!("another {kind}"), |id| format!("`{id}`"));
                    Err(format!(
                        "not applied: {other} failed, and the {kind}s of one reply \
                         apply together or not at all; fix that one and send them all again"
                    ))
                }
            };
            Some((id?, answer))
        })
        .collect()
}

/// What an applied call did to its path, and the warnings about it.
fn done(outcome: &Outcome, path: &str) -> String {
    let verb = match outcome.mode {
        crate::Mode::Apply { dry_run: false } => "applied",
        _ => "would apply (dry run)",
    };
    let mut out = match outcome
        .files
        .iter()
        .find(|f| f.path == path || f.from.as_deref() == Some(path))
    {
        Some(f) => format!(
            "{verb}: {} {} (+{} -{})",
            f.action.word(),
            f.path,
            f.added,
            f.removed
        ),
        None => format!("{verb}: {path}"),
    };
    for w in outcome
        .diagnostics
        .iter()
        .filter(|d| d.path.as_deref() == Some(path))
    {
        out.push_str(&format!("\nwarning[{}]: {}", w.code.as_str(), w.message));
    }
    out
}

/// An error as a model reads it: code, message, notes and hint.
fn explained(e: &crate::Diagnostic) -> String {
    let mut out = format!("error[{}]: {}", e.code.as_str(), e.message);
    for note in &e.notes {
        out.push_str(&format!("\nnote: {note}"));
    }
    if let Some(hint) = &e.hint {
        out.push_str(&format!("\nhint: {hint}"));
    }
    out
}
