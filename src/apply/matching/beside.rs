//! A pass over a large file shared with one more thread, for the passes
//! whose parts are independent (counting a patch's keys, counting
//! brackets), and a task run beside other work (a large patch's results
//! while the commit writes). The machine a tool call runs on has a second
//! core, and such a pass over a file of hundreds of thousands of lines is
//! milliseconds: kept because large ap applies measured faster with it
//! than without (paired runs), where smaller files never start the thread.
//!
//! Starting a thread is quick, but on a virtual machine the thread may
//! run only after a while. So this thread never
//! waits for the other to start: a pass is in chunks that each thread
//! takes in turn ([`share`]), and a task beside other work is done here
//! when the other thread has not taken it by then ([`overlap`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `work` on chunks `0..n`, each once, on this thread and, for `n`
/// of [`SHARED`] or more, on one more: each thread takes the next chunk not
/// yet taken, with its own state (`mine` here, `theirs()` there). Returns
/// both states (the other's if there was one) and each chunk's result, in
/// chunk order.
pub fn share<S: Send, T: Send>(
    n: usize,
    mut mine: S,
    theirs: impl FnOnce() -> S + Send,
    work: impl Fn(&mut S, usize) -> T + Sync,
) -> (S, Option<S>, Vec<T>) {
    let next = AtomicUsize::new(0);
    let run = |state: &mut S| {
        let mut done = vec![];
        loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= n {
                return done;
            }
            done.push((c, work(state, c)));
        }
    };
    let (mut done, theirs) = if n >= SHARED {
        std::thread::scope(|scope| {
            let other = scope.spawn(|| {
                let mut theirs = theirs();
                let done = run(&mut theirs);
                (theirs, done)
            });
            let mut done = run(&mut mine);
            let (theirs, others) = other.join().expect("the work does not panic");
            done.extend(others);
            (done, Some(theirs))
        })
    } else {
        (run(&mut mine), None)
    };
    done.sort_unstable_by_key(|&(c, _)| c);
    debug_assert!(done.iter().enumerate().all(|(i, &(c, _))| i == c));
    (mine, theirs, done.into_iter().map(|(_, t)| t).collect())
}

/// Runs `task` on another thread while `mine` runs here, and returns both
/// results; `task` runs here after `mine` when the other thread has not
/// started it by then.
pub fn overlap<A, B: Send>(task: impl FnOnce() -> B + Send, mine: impl FnOnce() -> A) -> (A, B) {
    let slot = Mutex::new(Some(task));
    let take = || slot.lock().expect("no task panics").take();
    std::thread::scope(|scope| {
        let other = scope.spawn(|| take().map(|task| task()));
        let a = mine();
        let b = match take() {
            Some(task) => task(),
            None => other
                .join()
                .expect("no task panics")
                .expect("the other thread took it"),
        };
        (a, b)
    })
}

/// How large a file is (in bytes) before a pass over it is made beside
/// other work (its brackets counted, its edits' keys hashed): starting a
/// thread costs more than that work on a smaller file.
pub const LARGE_FILE: usize = 1 << 20;

/// How many chunks make a pass worth a second thread (a count of 32,768
/// lines or more): below that, starting the thread costs more than it
/// saves.
pub const SHARED: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    /// Both results, whichever thread ran the task.
    #[test]
    fn an_overlapped_task_runs_once_here_or_there() {
        for pause in [0, 5] {
            let runs = AtomicUsize::new(0);
            let (a, b) = overlap(
                || {
                    runs.fetch_add(1, Ordering::Relaxed);
                    7
                },
                || {
                    std::thread::sleep(std::time::Duration::from_millis(pause));
                    3
                },
            );
            assert_eq!((a, b, runs.load(Ordering::Relaxed)), (3, 7, 1));
        }
    }

    /// Every chunk is done once, its result in its place, and the states
    /// together saw every chunk, with and without the second thread.
    #[test]
    fn every_chunk_is_done_once_in_order() {
        for n in [0, 1, SHARED - 1, SHARED, 100, 1000] {
            let (mine, theirs, results) = share(n, vec![], Vec::new, |seen: &mut Vec<usize>, c| {
                seen.push(c);
                c * 3
            });
            assert_eq!(results, (0..n).map(|c| c * 3).collect::<Vec<_>>());
            assert_eq!(theirs.is_some(), n >= SHARED);
            let mut all = [mine, theirs.unwrap_or_default()].concat();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
    }
}
