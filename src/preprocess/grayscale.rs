//! Grayscale frames from raw ALE screens (palette indices), max-pooled as ale_py pools them: the
//! palette lookup and the max-pool are one pass, and only the rows that changed since the last
//! step are recomputed (successive Atari frames leave 80–95% of the rows as they were).

/// The grayscale value of each palette index, as ALE's `getScreenGrayscale` maps it.
pub type GrayPalette = [u8; 256];

/// Pools the last two raw frames of one env into its grayscale frame.
pub struct GrayPooler {
    palette: GrayPalette,
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

impl GrayPooler {
    pub fn new(palette: GrayPalette, height: usize, width: usize) -> Self {
        Self {
            palette,
            width,
            pooled: vec![0; height * width],
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

    /// Pools the raw frames: `max(gray[newest], gray[previous])` (see [`pool_gray_frames`] for the
    /// cases without a new or a previous frame). Returns the pooled frame and the rows that changed
    /// since the last call (`None`: any may have).
    pub fn pool(&mut self, newest: &[u8], previous: &[u8], maxpool: bool) -> (&[u8], Option<&[bool]>) {
        let newest_is_new = std::mem::take(&mut self.newest_is_new);
        let both = maxpool && !self.previous_is_black;
        if both && newest_is_new && self.seen_valid {
            let [seen_newest, seen_previous] = &mut self.seen;
            pool_gray_changed_rows(
                &mut self.pooled,
                [newest, previous],
                [seen_newest, seen_previous],
                self.width,
                &self.palette,
                &mut self.changed,
            );
            return (&self.pooled, Some(&self.changed));
        }
        pool_gray_frames(&mut self.pooled, newest_is_new.then_some(newest), both.then_some(previous), &self.palette);
        self.seen_valid = both && newest_is_new;
        if self.seen_valid {
            self.seen[0].copy_from_slice(newest);
            self.seen[1].copy_from_slice(previous);
        }
        (&self.pooled, None)
    }
}

/// `dst[i] = max(base[i], gray[other[i]])`, where `base` is `gray[newest[i]]` when a new frame
/// was captured and `dst` itself (the last pooled frame) when not, and an absent `other` is black.
fn pool_gray_frames(dst: &mut [u8], newest: Option<&[u8]>, other: Option<&[u8]>, gray: &GrayPalette) {
    match (newest, other) {
        (Some(newest), Some(other)) => {
            assert!(newest.len() == dst.len() && other.len() == dst.len(), "frames must have equal sizes");
            for ((d, &a), &b) in dst.iter_mut().zip(newest).zip(other) {
                *d = gray[a as usize].max(gray[b as usize]);
            }
        }
        (Some(newest), None) => {
            assert_eq!(newest.len(), dst.len(), "frames must have equal sizes");
            for (d, &a) in dst.iter_mut().zip(newest) {
                *d = gray[a as usize];
            }
        }
        (None, Some(other)) => {
            assert_eq!(other.len(), dst.len(), "frames must have equal sizes");
            for (d, &b) in dst.iter_mut().zip(other) {
                *d = (*d).max(gray[b as usize]);
            }
        }
        (None, None) => {}
    }
}

/// [`pool_gray_frames`] of two frames, but only for the rows (`width` pixels each) where either
/// frame differs from the raw rows `dst` was pooled from, kept in `seen`; those rows are recomputed
/// and recorded in `seen`, and `changed` marks them.
fn pool_gray_changed_rows(
    dst: &mut [u8],
    [newest, other]: [&[u8]; 2],
    [seen_newest, seen_other]: [&mut [u8]; 2],
    width: usize,
    gray: &GrayPalette,
    changed: &mut [bool],
) {
    let sizes = [newest.len(), other.len(), seen_newest.len(), seen_other.len(), changed.len() * width];
    assert!(sizes.iter().all(|&n| n == dst.len()), "frames must have equal sizes");
    for (row, is_changed) in changed.iter_mut().enumerate() {
        let span = row * width..(row + 1) * width;
        let (new_a, new_b) = (&newest[span.clone()], &other[span.clone()]);
        *is_changed = new_a != &seen_newest[span.clone()] || new_b != &seen_other[span.clone()];
        if *is_changed {
            seen_newest[span.clone()].copy_from_slice(new_a);
            seen_other[span.clone()].copy_from_slice(new_b);
            pool_gray_frames(&mut dst[span], Some(new_a), Some(new_b), gray);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn palette() -> GrayPalette {
        std::array::from_fn(|i| (255 - i) as u8)
    }

    #[test]
    fn converts_and_pools() {
        let gray = palette();
        let mut dst = [0u8; 3];
        pool_gray_frames(&mut dst, Some(&[0, 10, 200]), Some(&[5, 0, 100]), &gray);
        assert_eq!(dst, [255, 255, 155]);
        pool_gray_frames(&mut dst, Some(&[0, 10, 200]), None, &gray);
        assert_eq!(dst, [255, 245, 55]);
        // No new frame: the last pooled frame is pooled again with the other one.
        pool_gray_frames(&mut dst, None, Some(&[100, 0, 250]), &gray);
        assert_eq!(dst, [255, 255, 55]);
    }

    #[test]
    fn pooler_recomputes_only_changed_rows_and_matches_a_full_pool() {
        let gray = palette();
        let mut pooler = GrayPooler::new(gray, 3, 2);
        let (a, b) = ([1u8, 2, 3, 4, 5, 6], [6u8, 5, 4, 3, 2, 1]);
        // After a reset the previous frame is black: the newest frame alone, everything new.
        pooler.reset();
        pooler.captured(0);
        let (frame, changed) = pooler.pool(&a, &b, true);
        assert_eq!((frame, changed), (&[254u8, 253, 252, 251, 250, 249][..], None));
        // Both frames captured: a full pool first, then only the rows that changed.
        pooler.captured(0);
        pooler.captured(1);
        assert_eq!(pooler.pool(&a, &b, true).1, None);
        let a2 = [1u8, 2, 9, 9, 5, 6];
        pooler.captured(0);
        pooler.captured(1);
        let (frame, changed) = pooler.pool(&a2, &b, true);
        let mut expected = [0u8; 6];
        pool_gray_frames(&mut expected, Some(&a2), Some(&b), &gray);
        assert_eq!((frame, changed), (&expected[..], Some(&[false, true, false][..])));
        // No new newest frame (an episode that ended early): pooled again from the last result.
        pooler.captured(1);
        let b2 = [0u8; 6];
        let (frame, changed) = pooler.pool(&a, &b2, true);
        assert_eq!((frame, changed), (&[255u8; 6][..], None));
    }
}
