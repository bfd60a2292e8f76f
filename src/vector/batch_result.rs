//! The batch a `recv` returns: one row per env, filled by the caller from the envs' state after
//! their jobs finish.
//!
//! Buffers are plain `Vec`s so the Python layer hands them to numpy without copying; the stacked
//! observation is copied once, from the env's frame stack straight into its row here. (ALE's own
//! vectorizer has its workers write into batch slots instead; without `unsafe` outside `ffi/`, that
//! needs a buffer per row and a second copy to make the batch contiguous, so it would copy more.)
use super::worker::EnvSlot;

#[derive(Debug, Clone, PartialEq)]
pub struct BatchResult {
    pub obs: Vec<u8>,
    pub env_ids: Vec<i32>,
    pub rewards: Vec<i32>,
    pub terminations: Vec<bool>,
    pub truncations: Vec<bool>,
    pub lives: Vec<i32>,
    pub frame_numbers: Vec<i32>,
    pub episode_frame_numbers: Vec<i32>,
    /// Same-step mode only: final observations (rows of envs that did not end are zero) and their mask.
    pub final_obs: Option<Vec<u8>>,
    pub final_obs_mask: Option<Vec<bool>>,
}

impl BatchResult {
    pub(crate) fn new(batch_size: usize, obs_size: usize, same_step: bool) -> Self {
        Self {
            obs: vec![0; batch_size * obs_size],
            env_ids: vec![0; batch_size],
            rewards: vec![0; batch_size],
            terminations: vec![false; batch_size],
            truncations: vec![false; batch_size],
            lives: vec![0; batch_size],
            frame_numbers: vec![0; batch_size],
            episode_frame_numbers: vec![0; batch_size],
            final_obs: same_step.then(|| vec![0; batch_size * obs_size]),
            final_obs_mask: same_step.then(|| vec![false; batch_size]),
        }
    }

    pub fn batch_size(&self) -> usize {
        self.env_ids.len()
    }

    /// Whether any env in the batch ended its episode.
    pub fn any_done(&self) -> bool {
        self.terminations.iter().zip(&self.truncations).any(|(&t, &u)| t || u)
    }

    pub(crate) fn fill_row(&mut self, row: usize, env_id: usize, slot: &EnvSlot, include_final: bool) {
        let size = slot.env.stacked_obs_size();
        slot.env.write_obs(&mut self.obs[row * size..(row + 1) * size]);
        let out = &slot.output;
        self.env_ids[row] = env_id as i32;
        self.rewards[row] = out.reward;
        self.terminations[row] = out.terminated;
        self.truncations[row] = out.truncated;
        self.lives[row] = out.lives;
        self.frame_numbers[row] = out.frame_number;
        self.episode_frame_numbers[row] = out.episode_frame_number;
        if let (Some(final_obs), Some(mask)) = (self.final_obs.as_mut(), self.final_obs_mask.as_mut()) {
            let has_final = include_final && slot.has_final_obs;
            mask[row] = has_final;
            if has_final {
                final_obs[row * size..(row + 1) * size].copy_from_slice(&slot.final_obs);
            }
        }
    }
}
