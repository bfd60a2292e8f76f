//! `render_rgb`: every env's current screen in full-resolution RGB, for `render()` and recording.
use super::AtariVectorEnv;
use crate::error::{Error, Result};

impl AtariVectorEnv {
    /// The screens of all envs in env-id order, `(num_envs, height, width, 3)` RGB bytes, with
    /// `(height, width)`. Only between batches: while a step is in flight its env's screen is
    /// changing (async mode keeps envs in flight after `recv`), so that is an `InvalidState` error.
    pub fn render_rgb(&self) -> Result<(Vec<u8>, (usize, usize))> {
        self.check_usable()?;
        if self.in_flight > 0 {
            return Err(Error::InvalidState(format!(
                "render() needs every environment idle, but {} steps are in flight: call recv() first \
                 (with batch_size < num_envs, envs stay in flight after recv(), so render() needs batch_size == num_envs)",
                self.in_flight
            )));
        }
        let (height, width) = self.lock_env(0)?.env.screen_dims()?;
        let frame_size = height.checked_mul(width).and_then(|s| s.checked_mul(3));
        let total = frame_size.and_then(|s| s.checked_mul(self.num_envs()));
        let (Some(frame_size), Some(total)) = (frame_size, total) else {
            return Err(Error::TooLarge(format!(
                "a {height}x{width} screen for {} envs does not fit in memory",
                self.num_envs()
            )));
        };
        let mut frames = vec![0u8; total];
        for (env_id, frame) in frames.chunks_exact_mut(frame_size).enumerate() {
            let slot = self.lock_env(env_id)?;
            // A reset run ahead has moved the env on; until its next step it shows the ended episode.
            match slot.ahead.ended_screen() {
                Some(ended) => frame.copy_from_slice(ended),
                None => slot.env.render_rgb_into(frame)?,
            }
        }
        Ok((frames, (height, width)))
    }
}
