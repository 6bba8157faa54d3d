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
//!
//! Where a new thread runs is the kernel's choice, and a kernel that
//! keeps idle CPUs asleep (as the guest we measure on does) queues it on
//! the busy CPU of the thread that started it: the two then take turns
//! there, or the new one waits up to a scheduler tick (milliseconds), while
//! the other CPU idles. So a new thread's first act here is to leave its
//! starter's CPU (its affinity without it, where another is allowed), and
//! the starter yields once, so that a thread queued behind it runs at once
//! to do so ([`start_in`]). That is always safe for work this thread takes
//! back when the other is late, as both passes here do. A thread this one
//! will wait for (the file read beside the parse, which the planner joins)
//! is moved only where no other task wants a CPU at its start
//! ([`start_awaited`]): on a CPU another process keeps busy it would run at
//! half speed while this one waited (paired runs with a busy loop on the
//! other CPU took 1.10 to 1.30 of the time with it always moved).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::{JoinHandle, Scope, ScopedJoinHandle};

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
            let other = start_in(scope, || {
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
        let other = start_in(scope, || take().map(|task| task()));
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

/// Starts `work` on a new thread of `scope`, on another CPU than this
/// thread's where the process may use one (see the module's
/// documentation).
fn start_in<'s, T: Send + 's>(
    scope: &'s Scope<'s, '_>,
    work: impl FnOnce() -> T + Send + 's,
) -> ScopedJoinHandle<'s, T> {
    let thread = scope.spawn(elsewhere(work));
    std::thread::yield_now();
    thread
}

/// Starts `work` on a new thread this one will wait for (see the module's
/// documentation): moved off this thread's CPU only where no other task
/// wants a CPU now ([`alone`]), and told whether it was, so that it may
/// choose how to work beside or with this one.
pub fn start_awaited<T: Send + 'static>(
    work: impl FnOnce(bool) -> T + Send + 'static,
) -> std::io::Result<JoinHandle<T>> {
    let moved = alone();
    let builder = std::thread::Builder::new();
    let thread = match moved {
        true => builder.spawn(elsewhere(move || work(true))),
        false => builder.spawn(move || work(false)),
    };
    if moved {
        std::thread::yield_now();
    }
    thread
}

/// Whether this thread's task is the only one that wants a CPU now: the
/// running and runnable count of `/proc/loadavg` (which counts this
/// thread) is 1. Where it cannot be read, no.
fn alone() -> bool {
    let Ok(load) = std::fs::read_to_string("/proc/loadavg") else {
        return false;
    };
    runnable(&load) == Some(1)
}

/// The running and runnable tasks in a `/proc/loadavg` text: the number
/// before the `/` of its fourth field.
fn runnable(load: &str) -> Option<u32> {
    load.split_whitespace()
        .nth(3)?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// `work`, made to move the thread that runs it off this thread's CPU
/// first.
fn elsewhere<T>(work: impl FnOnce() -> T) -> impl FnOnce() -> T {
    let starter = rustix::thread::sched_getcpu();
    move || {
        leave(starter);
        work()
    }
}

/// Takes `cpu` from this thread's affinity, where another CPU is left in
/// it; where the call is refused, nothing changes.
fn leave(cpu: usize) {
    if let Ok(mut cpus) = rustix::thread::sched_getaffinity(None) {
        cpus.unset(cpu);
        if cpus.count() > 0 {
            let _ = rustix::thread::sched_setaffinity(None, &cpus);
        }
    }
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

    /// A thread started beside this one leaves the CPU it was started
    /// from, and only that one, where the process may use more than one;
    /// on one CPU its affinity stays whole. Leaving a CPU not allowed
    /// changes nothing.
    #[test]
    fn a_thread_started_beside_leaves_its_starters_cpu() {
        use rustix::thread::{sched_getaffinity, sched_getcpu, CpuSet};
        let allowed = sched_getaffinity(None).unwrap();
        let (cpu, theirs) = std::thread::scope(|scope| {
            let theirs = start_in(scope, || (sched_getcpu(), sched_getaffinity(None).unwrap()));
            theirs.join().unwrap()
        });
        if allowed.count() > 1 {
            assert_eq!(theirs.count(), allowed.count() - 1);
            assert!(theirs.is_set(cpu), "it runs where it may");
        } else {
            assert_eq!(theirs.count(), allowed.count());
        }
        let outside = (0..CpuSet::MAX_CPU).find(|&c| !allowed.is_set(c)).unwrap();
        let kept = std::thread::spawn(move || {
            leave(outside);
            sched_getaffinity(None).unwrap()
        });
        assert_eq!(kept.join().unwrap().count(), allowed.count());
    }

    /// A thread this one will wait for is told whether it was moved, and
    /// was where it says; the runnable count is read from `/proc/loadavg`'s
    /// fourth field, and a text without one moves nothing.
    #[test]
    fn an_awaited_thread_is_moved_only_when_alone() {
        use rustix::thread::sched_getaffinity;
        let allowed = sched_getaffinity(None).unwrap().count();
        for _ in 0..20 {
            let (moved, theirs) = start_awaited(|moved| (moved, sched_getaffinity(None).unwrap()))
                .unwrap()
                .join()
                .unwrap();
            let left = u32::from(moved && allowed > 1);
            assert_eq!(theirs.count(), allowed - left);
        }
        assert_eq!(runnable("1.00 1.03 1.23 1/79 13125\n"), Some(1));
        assert_eq!(runnable("0.52 0.58 0.59 3/467 4021"), Some(3));
        assert_eq!(runnable("0.52 0.58 0.59"), None);
        assert_eq!(runnable("0.52 0.58 0.59 x/467 4021"), None);
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
