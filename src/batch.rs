//! Many independent applies in memory at once: a training or evaluation
//! pipeline scoring thousands of model patches, each against its own tree
//! ([`MemTree`]), spread over threads. No disk, no lock: each job owns its
//! tree.

use std::panic::AssertUnwindSafe;
use std::sync::Mutex;

use crate::error::{Code, Diagnostic};
use crate::{MemTree, Outcome, Refused, Request};

/// One job: a request and the tree it runs in.
pub type Job = (Request<'static>, MemTree);

/// Runs every job ([`Request::run_in`]) on up to `threads` threads (0:
/// one per core), and returns each outcome with its tree, in the jobs'
/// order. A job that panics (a bug) fails alone (`io_error`, as a panic
/// in [`Request::run`] does), its tree rolled back.
pub fn run_all(jobs: Vec<Job>, threads: usize) -> Vec<(Result<Outcome, Refused>, MemTree)> {
    let count = jobs.len();
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, count.max(1));
    let queue = Mutex::new(jobs.into_iter().enumerate());
    let done = Mutex::new(Vec::with_capacity(count));
    let work = || loop {
        let Some((i, (request, tree))) = queue.lock().unwrap_or_else(|e| e.into_inner()).next()
        else {
            return;
        };
        let result = run_one(request, tree);
        done.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((i, result));
    };
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(work);
            }
        });
    }
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

fn run_one(request: Request<'static>, mut tree: MemTree) -> (Result<Outcome, Refused>, MemTree) {
    match std::panic::catch_unwind(AssertUnwindSafe(|| request.run_in(&mut tree))) {
        Ok(result) => (result, tree),
        Err(_) => {
            // Half a commit is undone from the tree's own journal.
            let rolled_back = crate::apply::writing::journal::recover(&mut tree).is_ok();
            let bug = Diagnostic::new(Code::IoError, "grammar-patch failed on this patch")
                .note(if rolled_back {
                    "this is a bug in grammar-patch; the tree was rolled back"
                } else {
                    "this is a bug in grammar-patch; the tree could not be rolled back"
                })
                .hint("report the patch that caused it; try the edit as a smaller patch");
            (Err(Box::new(bug)), tree)
        }
    }
}
