//! Grayscale conversion of raw ALE screens (palette indices) fused with the max-pool of the last
//! two frames: one pass over the screen instead of ALE's palette pass for each frame plus a max pass.

/// The grayscale value of each palette index, as ALE's `getScreenGrayscale` maps it.
pub type GrayPalette = [u8; 256];

/// `dst[i] = max(base[i], gray[other[i]])`, where `base` is `gray[newest[i]]` when a new frame
/// was captured and `dst` itself (the last pooled frame, as ale_py pools in place) when not, and an
/// absent `other` frame is black.
pub fn pool_gray_frames(dst: &mut [u8], newest: Option<&[u8]>, other: Option<&[u8]>, gray: &GrayPalette) {
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
}
