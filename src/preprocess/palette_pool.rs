//! Observation frames from raw ALE screens (palette indices), max-pooled as ale_py pools them: the
//! palette lookup (grayscale or RGB) and the max-pool are one pass, and only the rows that changed
//! since the last step are recomputed (successive Atari frames leave 80–95% of the rows as they were).

pub use crate::ale::Palette;

/// Pools the last two raw frames of one env into its observation frame (`channels` 1 or 3).
pub struct FramePooler {
    palette: Box<Palette>,
    channels: usize,
    width: usize,
    /// The last pooled frame. ale_py pools into its newest frame in place, so when no new frame
    /// was captured (an episode that ended early in the frame skip) the next pool starts from this.
    pooled: Vec<u8>,
    /// The raw frames `pooled` was last computed from, when `seen_valid`.
    seen: [Vec<u8>; 2],
    seen_valid: bool,
    /// Which rows the last [`pool`](Self::pool) recomputed.
    changed: Vec<bool>,
    newest_is_new: bool,
    previous_is_black: bool,
}

impl FramePooler {
    /// A pooler of `height x width` raw frames into frames of `channels` (1: grayscale, 3: RGB).
    pub fn new(palette: Palette, channels: usize, height: usize, width: usize) -> Self {
        assert!(matches!(channels, 1 | 3), "frames are grayscale (1 channel) or RGB (3)");
        Self {
            palette: Box::new(palette),
            channels,
            width,
            pooled: vec![0; height * width * channels],
            seen: [vec![0; height * width], vec![0; height * width]],
            seen_valid: false,
            changed: vec![true; height],
            newest_is_new: false,
            previous_is_black: true,
        }
    }

    /// Raw frame `index` (0: the newest, 1: the one before) was captured.
    pub fn captured(&mut self, index: usize) {
        if index == 0 {
            self.newest_is_new = true;
        } else {
            self.previous_is_black = false;
        }
    }

    /// After a reset the previous frame counts as black (ale_py zeroes it).
    pub fn reset(&mut self) {
        self.previous_is_black = true;
    }

    /// The last pooled frame (what the next pool starts from when no new frame was captured).
    pub fn pooled(&self) -> &[u8] {
        &self.pooled
    }

    /// `(newest_is_new, previous_is_black)`: what was captured since the last pool.
    pub fn flags(&self) -> (bool, bool) {
        (self.newest_is_new, self.previous_is_black)
    }

    /// Puts back a saved [`pooled`](Self::pooled) frame and [`flags`](Self::flags). The rows cache is
    /// dropped: the next pool computes every row.
    pub fn restore(&mut self, pooled: &[u8], (newest_is_new, previous_is_black): (bool, bool)) {
        self.pooled.copy_from_slice(pooled);
        (self.newest_is_new, self.previous_is_black) = (newest_is_new, previous_is_black);
        self.seen_valid = false;
    }

    /// Pools the raw frames: `max(palette[newest], palette[previous])` per channel (see
    /// `pool_frames` for the cases without a new or a previous frame). Returns the pooled frame
    /// and the rows that changed since the last call (`None`: any may have).
    pub fn pool(&mut self, newest: &[u8], previous: &[u8], maxpool: bool) -> (&[u8], Option<&[bool]>) {
        let newest_is_new = std::mem::take(&mut self.newest_is_new);
        let both = maxpool && !self.previous_is_black;
        if both && newest_is_new && self.seen_valid {
            let width = self.width;
            for (row, changed) in self.changed.iter_mut().enumerate() {
                let raw = row * width..(row + 1) * width;
                let (new_a, new_b) = (&newest[raw.clone()], &previous[raw.clone()]);
                *changed = new_a != &self.seen[0][raw.clone()] || new_b != &self.seen[1][raw.clone()];
                if *changed {
                    self.seen[0][raw.clone()].copy_from_slice(new_a);
                    self.seen[1][raw.clone()].copy_from_slice(new_b);
                    let out = &mut self.pooled[raw.start * self.channels..raw.end * self.channels];
                    pool_frames(out, Some(new_a), Some(new_b), &self.palette, self.channels);
                }
            }
            return (&self.pooled, Some(&self.changed));
        }
        let (newest_frame, previous_frame) = (newest_is_new.then_some(newest), both.then_some(previous));
        pool_frames(&mut self.pooled, newest_frame, previous_frame, &self.palette, self.channels);
        self.seen_valid = both && newest_is_new;
        if self.seen_valid {
            self.seen[0].copy_from_slice(newest);
            self.seen[1].copy_from_slice(previous);
        }
        (&self.pooled, None)
    }
}

/// `dst = max(base, palette[other])` per channel, where `base` is `palette[newest]` when a new frame
/// was captured and `dst` itself (the last pooled frame) when not, and an absent `other` is black.
fn pool_frames(dst: &mut [u8], newest: Option<&[u8]>, other: Option<&[u8]>, palette: &Palette, channels: usize) {
    if channels == 1 {
        pool_frames_with::<1>(dst, newest, other, palette);
    } else {
        pool_frames_with::<3>(dst, newest, other, palette);
    }
}

fn pool_frames_with<const C: usize>(dst: &mut [u8], newest: Option<&[u8]>, other: Option<&[u8]>, palette: &Palette) {
    let size = dst.len();
    let pixels = dst.chunks_exact_mut(C);
    match (newest, other) {
        (Some(newest), Some(other)) => {
            assert!(newest.len() * C == size && other.len() * C == size, "frames must have equal sizes");
            for ((d, &a), &b) in pixels.zip(newest).zip(other) {
                let (a, b) = (&palette[a as usize], &palette[b as usize]);
                for c in 0..C {
                    d[c] = a[c].max(b[c]);
                }
            }
        }
        (Some(newest), None) => {
            assert_eq!(newest.len() * C, size, "frames must have equal sizes");
            for (d, &a) in pixels.zip(newest) {
                d.copy_from_slice(&palette[a as usize][..C]);
            }
        }
        (None, Some(other)) => {
            assert_eq!(other.len() * C, size, "frames must have equal sizes");
            for (d, &b) in pixels.zip(other) {
                let b = &palette[b as usize];
                for c in 0..C {
                    d[c] = d[c].max(b[c]);
                }
            }
        }
        (None, None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn palette() -> Palette {
        std::array::from_fn(|i| [(255 - i) as u8, i as u8, (i / 2) as u8])
    }

    #[test]
    fn converts_and_pools() {
        let palette = palette();
        let mut dst = [0u8; 3];
        pool_frames(&mut dst, Some(&[0, 10, 200]), Some(&[5, 0, 100]), &palette, 1);
        assert_eq!(dst, [255, 255, 155]);
        pool_frames(&mut dst, Some(&[0, 10, 200]), None, &palette, 1);
        assert_eq!(dst, [255, 245, 55]);
        // No new frame: the last pooled frame is pooled again with the other one.
        pool_frames(&mut dst, None, Some(&[100, 0, 250]), &palette, 1);
        assert_eq!(dst, [255, 255, 55]);
        // RGB: the maximum of each channel.
        let mut rgb = [0u8; 6];
        pool_frames(&mut rgb, Some(&[0, 10]), Some(&[5, 2]), &palette, 3);
        assert_eq!(rgb, [255, 5, 2, 253, 10, 5]);
    }

    #[test]
    fn pooler_recomputes_only_changed_rows_and_matches_a_full_pool() {
        for channels in [1, 3] {
            let palette = palette();
            let mut pooler = FramePooler::new(palette, channels, 3, 2);
            let (a, b) = ([1u8, 2, 3, 4, 5, 6], [6u8, 5, 4, 3, 2, 1]);
            let full = |newest: &[u8], other: Option<&[u8]>| {
                let mut expected = vec![0u8; 6 * channels];
                pool_frames(&mut expected, Some(newest), other, &palette, channels);
                expected
            };
            // After a reset the previous frame is black: the newest frame alone, everything new.
            pooler.reset();
            pooler.captured(0);
            let (frame, changed) = pooler.pool(&a, &b, true);
            assert_eq!((frame, changed), (&full(&a, None)[..], None));
            // Both frames captured: a full pool first, then only the rows that changed.
            pooler.captured(0);
            pooler.captured(1);
            assert_eq!(pooler.pool(&a, &b, true).1, None);
            let a2 = [1u8, 2, 9, 9, 5, 6];
            pooler.captured(0);
            pooler.captured(1);
            let (frame, changed) = pooler.pool(&a2, &b, true);
            assert_eq!((frame, changed), (&full(&a2, Some(&b))[..], Some(&[false, true, false][..])));
            // No new newest frame (an episode that ended early): pooled again from the last result.
            pooler.captured(1);
            let mut expected = full(&a2, Some(&b));
            pool_frames(&mut expected, None, Some(&[0u8; 6]), &palette, channels);
            let (frame, changed) = pooler.pool(&a, &[0u8; 6], true);
            assert_eq!((frame, changed), (&expected[..], None));
        }
    }
}
