//! Whether resets run ahead pay, with `reset_ahead="auto"` (the default).
//!
//! A reset run ahead (see [`super::reset_ahead`]) hides in the time between a sync batch's return and
//! the next `send`, while the caller computes its policy. It pays only when that time is long enough to
//! hide some of a reset, and when a core is idle meanwhile: a GPU policy, or a sleep, leaves the step
//! threads' cores idle; a CPU policy that keeps every core busy (BLAS threads) would only lose the
//! CPU the reset takes (7% measured with a numpy policy on 2 cores), and an env-only loop comes
//! straight back, so the reset would just run beside the next batch's steps instead of before them.
//!
//! So this watches the gaps: their length (wall time), and how many cores the caller used during them
//! (the process's CPU time over the gap: the caller's threads, its BLAS or torch threads). Only gaps
//! with no reset ahead running are measured for CPU, since the pool's threads are otherwise idle
//! between sync batches; both figures are moving averages over the last few gaps.
use std::time::{Duration, Instant};

use super::config::ResetAheadMode;
use crate::ffi::process_cpu_time;

/// Gaps shorter than this hide too little of a reset (~2-4 ms of emulation for Breakout) to pay for
/// handing it to another thread; an env-only Python loop comes back within ~0.1 ms.
const MIN_GAP: Duration = Duration::from_micros(250);

/// The idle cores the caller must leave, on average, for a reset ahead to run: most of one.
const MIN_IDLE_CORES: f64 = 0.75;

/// Weight of the newest gap in the moving averages.
const NEWEST_WEIGHT: f64 = 0.125;

pub(crate) struct ResetPacing {
    mode: ResetAheadMode,
    /// Cores this process may use.
    cores: f64,
    /// The gap under way: when the batch was returned, and the process's CPU time then (`None` when
    /// resets ahead run in it, whose CPU is not the caller's).
    gap_start: Option<(Instant, Option<Duration>)>,
    gap_secs: MovingAverage,
    busy_cores: MovingAverage,
}

impl ResetPacing {
    /// Pacing for `mode`; `applies` is false where no reset is ever run ahead (async mode, other
    /// autoreset modes), and then nothing is measured.
    pub fn new(mode: ResetAheadMode, applies: bool) -> Self {
        let mode = if applies { mode } else { ResetAheadMode::Never };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        Self { mode, cores, gap_start: None, gap_secs: MovingAverage::default(), busy_cores: MovingAverage::default() }
    }

    /// Whether the resets of the batch about to be returned run ahead.
    pub fn run_ahead(&self) -> bool {
        match self.mode {
            ResetAheadMode::Never => false,
            ResetAheadMode::Always => true,
            ResetAheadMode::Auto => self.caller_leaves_a_core(),
        }
    }

    /// In auto mode, whether recent gaps were long enough and left a core idle. Until a gap has been
    /// measured (the first after `reset`), no.
    fn caller_leaves_a_core(&self) -> bool {
        match (self.gap_secs.value, self.busy_cores.value) {
            (Some(gap), Some(busy)) => gap >= MIN_GAP.as_secs_f64() && self.cores - busy >= MIN_IDLE_CORES,
            _ => false,
        }
    }

    /// A batch goes back to the caller (after `recv` or `reset`); `resets_ahead` says whether resets
    /// now run ahead beside the caller.
    pub fn batch_returned(&mut self, resets_ahead: bool) {
        if self.mode == ResetAheadMode::Auto {
            self.gap_start = Some((Instant::now(), (!resets_ahead).then(process_cpu_time)));
        }
    }

    /// The caller sends the next batch: the gap is over.
    pub fn caller_sent(&mut self) {
        let Some((started, cpu_then)) = self.gap_start.take() else { return };
        let wall = started.elapsed().as_secs_f64();
        self.gap_secs.add(wall);
        if let Some(cpu_then) = cpu_then {
            if wall > 0.0 {
                let cpu = process_cpu_time().saturating_sub(cpu_then).as_secs_f64();
                self.busy_cores.add(cpu / wall);
            }
        }
    }
}

#[derive(Default)]
struct MovingAverage {
    value: Option<f64>,
}

impl MovingAverage {
    fn add(&mut self, sample: f64) {
        self.value = Some(self.value.map_or(sample, |value| value + (sample - value) * NEWEST_WEIGHT));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pacing_after(gap: Duration, busy_cores: f64) -> ResetPacing {
        let mut pacing = ResetPacing::new(ResetAheadMode::Auto, true);
        pacing.gap_secs.add(gap.as_secs_f64());
        pacing.busy_cores.add(busy_cores);
        pacing
    }

    #[test]
    fn auto_runs_ahead_only_behind_long_gaps_that_leave_a_core_idle() {
        assert!(!ResetPacing::new(ResetAheadMode::Auto, true).run_ahead(), "nothing measured yet");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        assert!(pacing_after(Duration::from_millis(1), 0.0).run_ahead(), "a sleeping or GPU policy");
        assert!(!pacing_after(Duration::from_millis(1), cores).run_ahead(), "a CPU policy on every core");
        assert!(!pacing_after(Duration::from_micros(50), 0.0).run_ahead(), "an env-only loop");
    }

    #[test]
    fn fixed_modes_ignore_the_gaps() {
        assert!(ResetPacing::new(ResetAheadMode::Always, true).run_ahead());
        assert!(!ResetPacing::new(ResetAheadMode::Always, false).run_ahead());
        assert!(!ResetPacing::new(ResetAheadMode::Never, true).run_ahead());
    }

    #[test]
    fn a_gap_is_measured_between_a_batch_and_the_next_send() {
        let mut pacing = ResetPacing::new(ResetAheadMode::Auto, true);
        pacing.batch_returned(false);
        std::thread::sleep(Duration::from_millis(2));
        pacing.caller_sent();
        assert!(pacing.gap_secs.value.is_some_and(|gap| gap >= 0.002));
        // Other tests run in this process meanwhile: the CPU measured is theirs too, so only its presence is checked.
        let busy = pacing.busy_cores.value;
        assert!(busy.is_some());
        pacing.batch_returned(true);
        std::thread::sleep(Duration::from_millis(1));
        pacing.caller_sent();
        assert_eq!(pacing.busy_cores.value, busy, "gaps with resets ahead are not measured for CPU");
    }
}
