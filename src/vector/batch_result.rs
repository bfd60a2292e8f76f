//! The batch a `recv` returns: one row per env, filled by the caller from the envs' state after
//! their jobs finish.
//!
//! Buffers are plain `Vec`s so the Python layer hands them to numpy without copying; the stacked
//! observation is copied once, from the env's frame stack straight into its row here. (ALE's own
//! vectorizer has its workers write into batch slots instead; without `unsafe` outside `ffi/`, that
//! needs a buffer per row and a second copy to make the batch contiguous, so it would copy more.)
use super::env_slot::{EndedRow, EnvSlot};
use crate::ale::RAM_SIZE;
use crate::atari::StepOutput;

/// The columns a batch carries only when asked: final observations (same-step autoreset), episode
/// statistics, RAM.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptionalColumns {
    pub same_step: bool,
    pub episode_statistics: bool,
    pub ram: bool,
}

/// The `episode_statistics` columns: every row's unclipped reward, and for the rows whose step
/// ended an episode (`ended`), its raw return, steps and frames (zero in the other rows, as in
/// gymnasium's `RecordEpisodeStatistics`, whose dtypes they have).
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeColumns {
    pub raw_rewards: Vec<i32>,
    pub ended: Vec<bool>,
    pub returns: Vec<f64>,
    pub lengths: Vec<i64>,
    pub frames: Vec<i64>,
}

impl EpisodeColumns {
    fn new(batch_size: usize) -> Self {
        Self {
            raw_rewards: vec![0; batch_size],
            ended: vec![false; batch_size],
            returns: vec![0.0; batch_size],
            lengths: vec![0; batch_size],
            frames: vec![0; batch_size],
        }
    }

    /// Row `row` from an env's output; `ran`: whether that env's job ran for this batch.
    fn fill_row(&mut self, row: usize, out: &StepOutput, ran: bool) {
        self.raw_rewards[row] = out.raw_reward;
        let episode = out.episode.filter(|_| ran);
        self.ended[row] = episode.is_some();
        let stats = episode.unwrap_or_default();
        // A return's magnitude stays far below 2**53 (i32 rewards over u32 steps), so f64 holds it exactly.
        self.returns[row] = stats.raw_return as f64;
        self.lengths[row] = stats.steps.into();
        self.frames[row] = stats.frames.into();
    }

    /// Whether any row's step ended an episode.
    pub fn any_ended(&self) -> bool {
        self.ended.iter().any(|&ended| ended)
    }
}

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
    /// With `episode_statistics` only.
    pub episodes: Option<EpisodeColumns>,
    /// Each row's RAM after its step (`ram_in_info`), `RAM_SIZE` bytes a row.
    pub ram: Option<Vec<u8>>,
}

impl BatchResult {
    pub(crate) fn new(batch_size: usize, obs_size: usize, columns: OptionalColumns) -> Self {
        let OptionalColumns { same_step, episode_statistics, ram } = columns;
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
            episodes: episode_statistics.then(|| EpisodeColumns::new(batch_size)),
            ram: ram.then(|| vec![0; batch_size * RAM_SIZE]),
        }
    }

    pub fn batch_size(&self) -> usize {
        self.env_ids.len()
    }

    /// Whether any env in the batch ended its episode.
    pub fn any_done(&self) -> bool {
        self.terminations.iter().zip(&self.truncations).any(|(&t, &u)| t || u)
    }

    /// Row `row` from env `env_id`; `ran`: whether its job ran for this batch (else it reports its
    /// state without a final observation or an ended episode, as the envs a partial reset leaves out).
    pub(crate) fn fill_row(&mut self, row: usize, env_id: usize, slot: &EnvSlot, ran: bool) {
        let size = slot.env.stacked_obs_size();
        let obs = &mut self.obs[row * size..(row + 1) * size];
        // A reset run ahead has moved the env on; the row still shows what its last job returned.
        match slot.ahead.ended_obs() {
            Some(ended) => obs.copy_from_slice(ended),
            None => slot.env.write_obs(obs),
        }
        let final_obs = (ran && slot.has_final_obs).then_some(slot.final_obs.as_slice());
        self.fill_columns(row, env_id, &slot.output, final_obs, ran);
    }

    /// Row `row` from env `env_id`'s step that ended its episode and copied its row before starting
    /// the next reset (next-step mode: no final observation).
    pub(crate) fn fill_ended_row(&mut self, row: usize, env_id: usize, ended: &EndedRow) {
        let size = ended.obs.len();
        self.obs[row * size..(row + 1) * size].copy_from_slice(&ended.obs);
        self.fill_columns(row, env_id, &ended.output, None, true);
    }

    /// Every column of row `row` but the observation.
    fn fill_columns(&mut self, row: usize, env_id: usize, out: &StepOutput, final_obs: Option<&[u8]>, ran: bool) {
        self.env_ids[row] = env_id as i32;
        self.rewards[row] = out.reward;
        self.terminations[row] = out.terminated;
        self.truncations[row] = out.truncated;
        self.lives[row] = out.lives;
        self.frame_numbers[row] = out.frame_number;
        self.episode_frame_numbers[row] = out.episode_frame_number;
        if let (Some(columns), Some(mask)) = (self.final_obs.as_mut(), self.final_obs_mask.as_mut()) {
            mask[row] = final_obs.is_some();
            if let Some(final_obs) = final_obs {
                let size = final_obs.len();
                columns[row * size..(row + 1) * size].copy_from_slice(final_obs);
            }
        }
        if let Some(episodes) = self.episodes.as_mut() {
            episodes.fill_row(row, out, ran);
        }
        if let Some(ram) = self.ram.as_mut() {
            ram[row * RAM_SIZE..(row + 1) * RAM_SIZE].copy_from_slice(&out.ram.0);
        }
    }
}
