//! The process vectorizer's doorbells between threads (the same atomics and futexes, or on Windows
//! events, that processes share): commands and results are never lost, whether the waiter spins or sleeps, and waits end
//! at their timeout.
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use torchwm::doorbell::{Doorbells, Patience, WakeLines};
use torchwm::poll_budget::PollBudget;

fn words(workers: usize) -> Vec<AtomicU32> {
    (0..Doorbells::words_needed(workers).unwrap()).map(|_| AtomicU32::new(0)).collect()
}

/// What the sleepers of `workers` workers' doorbells sleep on (one for all the threads, as the
/// processes of a vectorizer share theirs).
fn wake(workers: usize) -> WakeLines {
    WakeLines::new(Doorbells::lines(workers).unwrap()).unwrap()
}

const NO_CHECKS: fn() -> torchwm::Result<()> = || Ok(());
const LONG: Duration = Duration::from_secs(30);

/// Parent and workers exchange `rounds` commands and results with the given patience (with a spin
/// budget of each thread's own when `adapting`); every command is seen once, in order, and every
/// result arrives.
fn ping_pong(workers: usize, rounds: u32, patience: Patience, adapting: bool) {
    let (memory, wake) = (words(workers), wake(workers));
    let parent_budget = PollBudget::default();
    let bells = doorbells(&memory, &wake, workers, &parent_budget, adapting);
    std::thread::scope(|scope| {
        for w in 0..workers {
            let (memory, wake) = (&memory, &wake);
            scope.spawn(move || {
                let budget = PollBudget::default();
                let bells = doorbells(memory, wake, workers, &budget, adapting);
                for seen in 0..rounds {
                    let kind = bells.wait_command(w, seen, patience, LONG, NO_CHECKS).unwrap();
                    assert_eq!(kind, Some(seen % 7), "worker {w} round {seen}");
                    bells.complete(w, seen % 5, seen + 1);
                }
            });
        }
        let all: Vec<usize> = (0..workers).collect();
        for round in 0..rounds {
            for &w in &all {
                bells.ring(w, round % 7);
            }
            let done = bells.wait_done(&all, workers, patience, LONG, NO_CHECKS).unwrap();
            assert_eq!(done, all, "round {round}");
            assert!(all.iter().all(|&w| bells.done_kind(w) == round % 5));
        }
    });
}

fn doorbells<'a>(
    memory: &'a [AtomicU32],
    wake: &'a WakeLines,
    workers: usize,
    budget: &'a PollBudget,
    adapting: bool,
) -> Doorbells<'a> {
    let bells = Doorbells::new(memory, wake, workers).unwrap();
    if adapting {
        bells.adapting(budget)
    } else {
        bells
    }
}

#[test]
fn commands_and_results_arrive_when_waiters_sleep_at_once() {
    ping_pong(3, 2_000, Patience::default(), false);
}

#[test]
fn commands_and_results_arrive_when_waiters_spin_and_yield() {
    let patience = Patience { spin: Duration::from_micros(50), yield_: Duration::from_micros(50) };
    ping_pong(2, 5_000, patience, false);
}

#[test]
fn commands_and_results_arrive_when_waiters_adapt_their_spin() {
    let patience = Patience { spin: Duration::from_micros(200), yield_: Duration::from_micros(50) };
    ping_pong(2, 5_000, patience, true);
}

#[test]
fn wait_done_returns_the_finished_workers_once_enough_are() {
    let (memory, wake) = (words(4), wake(4));
    let bells = Doorbells::new(&memory, &wake, 4).unwrap();
    for w in 0..4 {
        bells.ring(w, 1);
    }
    bells.complete(2, 9, 1);
    let done = bells.wait_done(&[0, 1, 2, 3], 1, Patience::default(), LONG, NO_CHECKS).unwrap();
    assert_eq!(done, vec![2]);
    assert!(!bells.is_done(0) && bells.is_done(2));
}

#[test]
fn a_command_rung_while_the_worker_is_busy_does_not_pass_for_done() {
    let (memory, wake) = (words(1), wake(1));
    let bells = Doorbells::new(&memory, &wake, 1).unwrap();
    bells.ring(0, 1);
    bells.ring(0, 2); // the parent's mistake: the worker has not finished the first
    bells.complete(0, 5, 1);
    assert!(!bells.is_done(0), "the second command is not done");
    bells.complete(0, 6, 2);
    assert!(bells.is_done(0) && bells.done_kind(0) == 6);
}

#[test]
fn waits_end_at_their_timeout() {
    let (memory, wake) = (words(1), wake(1));
    let bells = Doorbells::new(&memory, &wake, 1).unwrap();
    bells.ring(0, 1);
    let start = Instant::now();
    let done = bells.wait_done(&[0], 1, Patience::default(), Duration::from_millis(120), NO_CHECKS).unwrap();
    assert!(done.is_empty());
    assert!(start.elapsed() >= Duration::from_millis(120));
    let kind = bells.wait_command(0, 1, Patience::default(), Duration::from_millis(60), NO_CHECKS).unwrap();
    assert_eq!(kind, None);
}

#[test]
fn a_failing_check_ends_a_long_wait() {
    let (memory, wake) = (words(1), wake(1));
    let bells = Doorbells::new(&memory, &wake, 1).unwrap();
    bells.ring(0, 1);
    let start = Instant::now();
    let interrupted = || Err(torchwm::Error::Interrupted);
    let result = bells.wait_done(&[0], 1, Patience::default(), LONG, interrupted);
    assert!(matches!(result, Err(torchwm::Error::Interrupted)));
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_buffer_too_small_is_refused() {
    let (small, lines) = (words(2), wake(3));
    assert!(Doorbells::new(&small, &lines, 3).is_err());
    let (memory, few_lines) = (words(3), wake(2));
    assert!(Doorbells::new(&memory, &few_lines, 3).is_err() == cfg!(windows), "an event a line, on Windows");
    assert!(Doorbells::words_needed(usize::MAX).is_none());
}
