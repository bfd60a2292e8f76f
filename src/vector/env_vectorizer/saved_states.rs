//! `clone_states` / `restore_states`: each env's whole state as bytes, and back (see `saved_state`).
use super::AtariVectorEnv;
use crate::error::{Error, Result};
use crate::vector::saved_state::{self, SlotState, StateKey};

impl AtariVectorEnv {
    /// One state per env of `env_ids`: bytes that [`restore_states`](Self::restore_states) puts back
    /// into an env of the same game and settings, here or in another process.
    pub fn clone_states(&mut self, env_ids: &[usize]) -> Result<Vec<Vec<u8>>> {
        self.check_between_steps("clone_states", env_ids)?;
        let mut states = Vec::with_capacity(env_ids.len());
        for &env_id in env_ids {
            let slot_state = self.lock_env(env_id)?.save()?;
            states.push(saved_state::encode(&self.state_key(env_id), &slot_state)?);
        }
        Ok(states)
    }

    /// Puts `states[i]` into env `env_ids[i]`: its next step is then what the saved env's next step
    /// would have been. Every state is checked before any env is touched.
    pub fn restore_states(&mut self, env_ids: &[usize], states: &[&[u8]]) -> Result<()> {
        self.check_between_steps("restore_states", env_ids)?;
        if states.len() != env_ids.len() {
            return Err(Error::InvalidArgument(format!(
                "restore_states needs one state per env: got {} states for {} env ids",
                states.len(),
                env_ids.len()
            )));
        }
        let mut decoded = Vec::with_capacity(states.len());
        for (&env_id, bytes) in env_ids.iter().zip(states) {
            let slot_state: SlotState = saved_state::decode(&self.state_key(env_id), bytes)?;
            if !self.lock_env(env_id)?.fits(&slot_state)? {
                return Err(Error::InvalidArgument(
                    "cannot restore this env state: its buffers do not have this env's sizes".into(),
                ));
            }
            decoded.push(slot_state);
        }
        for (&env_id, slot_state) in env_ids.iter().zip(&decoded) {
            // ALE failing half-way would leave the env half restored: it must be reset.
            let restored = self.lock_env(env_id)?.restore(slot_state);
            if let Err(error) = restored {
                self.broken = Some(error.clone());
                return Err(error);
            }
        }
        Ok(())
    }

    /// States are taken and put back between steps, in sync mode: with no batch in flight, so
    /// that no worker is stepping an env meanwhile.
    fn check_between_steps(&self, call: &str, env_ids: &[usize]) -> Result<()> {
        self.check_steppable()?;
        if self.batch_size != self.config.num_envs {
            return Err(Error::InvalidArgument(format!(
                "{call} is not supported for async mode where batch_size < num_envs (got batch_size={}, \
                 num_envs={})",
                self.batch_size, self.config.num_envs
            )));
        }
        if self.last_env_ids.is_none() || self.interrupted_batch {
            return Err(Error::InvalidState(format!("{call}() called while a step is pending: call recv() first")));
        }
        self.check_env_ids(call, env_ids)
    }

    /// The game and the settings env `env_id`'s states are saved with, and must be restored with.
    fn state_key(&self, env_id: usize) -> StateKey {
        let rom = self.config.rom_for(env_id);
        let game = rom.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let settings = format!("{:?}; autoreset: {:?}", self.config.env_config(env_id), self.config.autoreset_mode);
        StateKey { game, settings }
    }
}
