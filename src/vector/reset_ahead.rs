//! Resets done ahead of the step that needs them.
//!
//! In next-step autoreset an env whose episode ended resets on its next step, whatever action comes.
//! So with `reset_ahead`, once the sync batch that ended the episode has been handed to the caller, a
//! low-priority thread does that reset at once, while the caller computes its policy; the next step
//! then takes its result instead of waiting for it. It is the same reset the step would have
//! run, in the same order of emulator calls and random draws, so every result stays bit-identical.
//!
//! Until its result is taken the env must still look as the ended episode left it: its observation
//! and screen are kept here, for a partial `reset` (which reports envs it leaves out) and `render`.
use super::saved_state::SavedReset;
use crate::atari::{AtariEnv, StepOutput};
use crate::error::{Error, Result};

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
