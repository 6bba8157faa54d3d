//! Where a command's time goes, for whoever asks (`GRAMMAR_PATCH_TIMINGS`
//! set and not empty): the end of each phase is marked as it happens
//! ([`mark`]), on whichever thread does it, and the command line writes
//! the marks to standard error when it is done ([`report`]). Unasked, a
//! mark is one load of the unset clock.

use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// When the clock started; unset where timings were not asked for.
static START: OnceLock<Instant> = OnceLock::new();
static MARKS: Mutex<Vec<(&'static str, Instant)>> = Mutex::new(Vec::new());

/// Starts the clock where `GRAMMAR_PATCH_TIMINGS` asks for timings; the
/// command line calls this first.
pub fn start() {
    if std::env::var_os("GRAMMAR_PATCH_TIMINGS").is_some_and(|v| !v.is_empty()) {
        START.get_or_init(Instant::now);
    }
}

/// Marks the end of `phase`, where timings were asked for.
pub fn mark(phase: &'static str) {
    if START.get().is_some() {
        let now = Instant::now();
        MARKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((phase, now));
    }
}

/// The marks so far, one line each in the order of their times: the
/// milliseconds from [`start`] and the phase; `None` where timings were
/// not asked for.
pub fn report() -> Option<String> {
    let start = *START.get()?;
    let mut marks = MARKS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    marks.sort_by_key(|&(_, at)| at);
    let lines = marks.iter().map(|(phase, at)| {
        let ms = at.duration_since(start).as_secs_f64() * 1e3;
        format!("timings: {ms:9.3} ms  {phase}\n")
    });
    Some(lines.collect())
}
