//! Resets done ahead of the step that needs them.
//!
//! In next-step autoreset an env whose episode ended resets on its next step, whatever action comes.
//! So when resets run ahead (`reset_ahead`, see [`super::reset_pacing`]), the step that ends an episode
//! starts that reset at once on a reset thread: the reset runs through the rest of the batch (on the
//! cores whose steps are done) and while the caller computes its policy; the next step then takes its
//! result instead of waiting for all of it. It is the same reset the step would have run, in the same
//! order of emulator calls and random draws, so every result stays bit-identical.
//!
//! The batch is filled without waiting for the reset: the step copies its row first ([`EndedRow`]).
//! Until the reset's result is taken the env must still look as the ended episode left it: its
//! observation and screen are kept here, for a partial `reset` (which reports envs it leaves out) and
//! `render`.
use super::saved_state::SavedReset;
use crate::atari::{AtariEnv, StepOutput};
use crate::error::{Error, Result};

/// The row of a step that ended its episode and queued the env's reset ahead: what the batch shows for
/// the env, copied before a reset thread can take the env.
pub(crate) struct EndedRow {
    pub output: StepOutput,
    pub obs: Vec<u8>,
}

impl EndedRow {
    /// Copies `env`'s row as its last step left it (`output` is what that step returned).
    pub fn copy(env: &AtariEnv, output: StepOutput) -> Box<Self> {
        let mut obs = vec![0; env.stacked_obs_size()];
        env.write_obs(&mut obs);
        Box::new(Self { output, obs })
    }
}

#[derive(Default)]
pub(crate) struct ResetAhead {
    state: State,
    /// The ended episode's stacked observation and RGB screen, kept once the reset has run.
    ended_obs: Vec<u8>,
    ended_screen: Vec<u8>,
}

#[derive(Default)]
enum State {
    #[default]
    Idle,
    Queued,
    Done(StepOutput),
    Failed(Error),
}

impl ResetAhead {
    /// Marks the reset as queued: a pool thread will [`run`](Self::run) it.
    pub fn queue(&mut self) {
        debug_assert!(matches!(self.state, State::Idle), "one reset ahead at a time");
        self.state = State::Queued;
    }

    /// Runs the queued reset on `env`, keeping what the ended episode showed. Does nothing when the
    /// reset was taken or dropped since it was queued.
    pub fn run(&mut self, env: &mut AtariEnv) {
        if matches!(self.state, State::Queued) {
            self.state = match self.reset(env) {
                Ok(output) => State::Done(output),
                Err(error) => State::Failed(error),
            };
        }
    }

    fn reset(&mut self, env: &mut AtariEnv) -> Result<StepOutput> {
        self.ended_obs.resize(env.stacked_obs_size(), 0);
        env.write_obs(&mut self.ended_obs);
        let (height, width) = env.screen_dims()?;
        self.ended_screen.resize(height * width * 3, 0);
        env.render_rgb_into(&mut self.ended_screen)?;
        env.reset()?;
        env.output()
    }

    /// For the job that comes next on the env: the reset's result if it has run (its error if it
    /// failed). A reset still queued is dropped, and the job runs it itself.
    pub fn take(&mut self) -> Option<Result<StepOutput>> {
        match std::mem::take(&mut self.state) {
            State::Done(output) => Some(Ok(output)),
            State::Failed(error) => Some(Err(error)),
            State::Idle | State::Queued => None,
        }
    }

    /// Drops the reset, run or not: for a seeded reset, which reloads the ROM, so nothing done ahead
    /// of it can show.
    pub fn cancel(&mut self) {
        self.state = State::Idle;
    }

    /// For a saved env: the reset's result and what the ended episode showed, once it has run;
    /// `None` when no reset is ahead. A reset still queued must be [`run`](Self::run) first.
    pub fn saved(&self) -> Result<Option<SavedReset>> {
        match &self.state {
            State::Idle => Ok(None),
            State::Done(output) => Ok(Some(SavedReset {
                output: *output,
                ended_obs: self.ended_obs.clone(),
                ended_screen: self.ended_screen.clone(),
            })),
            State::Failed(error) => Err(error.clone()),
            State::Queued => Err(Error::InvalidState("a reset ahead is still queued".into())),
        }
    }

    /// Puts back what [`saved`](Self::saved) returned.
    pub fn restore(&mut self, saved: Option<&SavedReset>) {
        self.state = match saved {
            None => State::Idle,
            Some(saved) => {
                self.ended_obs.clone_from(&saved.ended_obs);
                self.ended_screen.clone_from(&saved.ended_screen);
                State::Done(saved.output)
            }
        };
    }

    fn has_run(&self) -> bool {
        matches!(self.state, State::Done(_) | State::Failed(_))
    }

    /// The ended episode's observation, once the env has moved on to the next one.
    pub fn ended_obs(&self) -> Option<&[u8]> {
        self.has_run().then_some(self.ended_obs.as_slice())
    }

    /// The ended episode's last screen (RGB), once the env has moved on to the next one.
    pub fn ended_screen(&self) -> Option<&[u8]> {
        self.has_run().then_some(self.ended_screen.as_slice())
    }
}
