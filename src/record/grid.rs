//! One grid image from a batch of equal-sized RGB frames: frame `i` in row `i / cols`, column
//! `i % cols`, each scaled (nearest neighbour, so every pixel keeps a colour of its frame).
use image::RgbImage;

use super::config::{RecordConfig, AUTO_MAX_WIDTH, MAX_CANVAS_SIDE};
use super::error::RecordError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    pub num_frames: usize,
    pub frame_height: usize,
    pub frame_width: usize,
    pub cols: usize,
    pub rows: usize,
    pub tile_height: usize,
    pub tile_width: usize,
    pub padding: usize,
    pub canvas_height: usize,
    pub canvas_width: usize,
    /// Source row of each tile row, and source column of each tile column (nearest neighbour).
    source_rows: Vec<usize>,
    source_cols: Vec<usize>,
}

impl Grid {
    pub fn new(config: &RecordConfig) -> Result<Self, RecordError> {
        config.validate()?;
        let (height, width, n) = (config.frame_height, config.frame_width, config.num_frames);
        let cols = config.cols.unwrap_or_else(|| (1..=n).find(|c| c * c >= n).expect("n * n >= n"));
        let rows = n.div_ceil(cols);
        let scale = config.scale.unwrap_or_else(|| {
            let full_width = cols.saturating_mul(width);
            1.0 / full_width.div_ceil(AUTO_MAX_WIDTH).max(1) as f64
        });
        let scaled = |side: usize| ((side as f64 * scale).round() as usize).max(1);
        let (tile_height, tile_width) = (scaled(height), scaled(width));
        let side = |count: usize, tile: usize| {
            count
                .checked_mul(tile)?
                .checked_add((count - 1).checked_mul(config.padding)?)
                .filter(|&s| s <= MAX_CANVAS_SIDE)
        };
        let (Some(canvas_height), Some(canvas_width)) = (side(rows, tile_height), side(cols, tile_width)) else {
            return Err(RecordError::InvalidArgument(format!(
                "a grid of {rows}x{cols} tiles of {tile_height}x{tile_width} pixels is larger than \
                 {MAX_CANVAS_SIDE} pixels on a side: use a smaller scale"
            )));
        };
        Ok(Self {
            num_frames: n,
            frame_height: height,
            frame_width: width,
            cols,
            rows,
            tile_height,
            tile_width,
            padding: config.padding,
            canvas_height,
            canvas_width,
            source_rows: nearest_sources(height, tile_height),
            source_cols: nearest_sources(width, tile_width),
        })
    }

    /// Bytes of one batch of frames, `(num_frames, height, width, 3)`.
    pub fn batch_bytes(&self) -> usize {
        // At most 2^16 frames of 2^14 x 2^14 pixels (RecordConfig::validate): fits in 64 bits.
        self.num_frames * self.frame_height * self.frame_width * 3
    }

    /// The grid image of `frames`, `(num_frames, height, width, 3)` row-major RGB.
    pub fn compose(&self, frames: &[u8]) -> Result<RgbImage, RecordError> {
        if frames.len() != self.batch_bytes() {
            return Err(RecordError::InvalidArgument(format!(
                "expected {} frames of {}x{}x3 bytes ({} bytes), got {} bytes",
                self.num_frames,
                self.frame_height,
                self.frame_width,
                self.batch_bytes(),
                frames.len()
            )));
        }
        let mut canvas = RgbImage::new(self.canvas_width as u32, self.canvas_height as u32);
        let canvas_row = self.canvas_width * 3;
        let frame_size = self.batch_bytes() / self.num_frames;
        let pixels = canvas.as_mut();
        for (index, frame) in frames.chunks_exact(frame_size).enumerate() {
            let x = (index % self.cols) * (self.tile_width + self.padding);
            let y = (index / self.cols) * (self.tile_height + self.padding);
            for (tile_y, &source_y) in self.source_rows.iter().enumerate() {
                let source = &frame[source_y * self.frame_width * 3..][..self.frame_width * 3];
                let start = (y + tile_y) * canvas_row + x * 3;
                let row = &mut pixels[start..start + self.tile_width * 3];
                for (pixel, &source_x) in row.chunks_exact_mut(3).zip(&self.source_cols) {
                    pixel.copy_from_slice(&source[source_x * 3..source_x * 3 + 3]);
                }
            }
        }
        Ok(canvas)
    }
}

/// For each of `scaled` output positions, the input position whose centre is nearest its centre
/// (Pillow's NEAREST rule). Hand-written: image's `resize` runs its float filter even for
/// nearest-neighbour: 11 ms for a grid of 16 Atari frames, against under 1 ms here.
fn nearest_sources(source: usize, scaled: usize) -> Vec<usize> {
    (0..scaled).map(|i| ((2 * i + 1) * source / (2 * scaled)).min(source - 1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(n: usize, h: usize, w: usize) -> Vec<u8> {
        (0..n * h * w * 3).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn full_size_tiles_are_copied_exactly() {
        let mut config = RecordConfig::new(5, 6, 4);
        config.scale = Some(1.0);
        config.padding = 1;
        let grid = Grid::new(&config).unwrap();
        assert_eq!((grid.rows, grid.cols, grid.canvas_height, grid.canvas_width), (2, 3, 13, 14));
        let frames = batch(5, 6, 4);
        let canvas = grid.compose(&frames).unwrap();
        for index in 0..5 {
            let (x0, y0) = ((index % 3) * 5, (index / 3) * 7);
            for y in 0..6 {
                for x in 0..4 {
                    let at = ((index * 6 + y) * 4 + x) * 3;
                    assert_eq!(canvas.get_pixel((x0 + x) as u32, (y0 + y) as u32).0, frames[at..at + 3]);
                }
            }
        }
        // The empty sixth cell and the padding stay black.
        assert_eq!(canvas.get_pixel(13, 12).0, [0, 0, 0]);
        assert_eq!(canvas.get_pixel(4, 0).0, [0, 0, 0]);
    }

    #[test]
    fn auto_scale_keeps_sixteen_atari_frames_narrow() {
        let grid = Grid::new(&RecordConfig::new(16, 210, 160)).unwrap();
        assert_eq!((grid.rows, grid.cols, grid.tile_height, grid.tile_width), (4, 4, 105, 80));
        assert_eq!((grid.canvas_height, grid.canvas_width), (426, 326));
        let one = Grid::new(&RecordConfig::new(1, 210, 160)).unwrap();
        assert_eq!((one.canvas_height, one.canvas_width), (210, 160));
    }

    #[test]
    fn scaled_tiles_only_hold_colours_of_their_frame() {
        let mut config = RecordConfig::new(2, 10, 8);
        config.scale = Some(0.5);
        let grid = Grid::new(&config).unwrap();
        let frames = batch(2, 10, 8);
        let canvas = grid.compose(&frames).unwrap();
        let colours: Vec<&[u8]> = frames[..10 * 8 * 3].chunks(3).collect();
        for y in 0..5 {
            for x in 0..4 {
                assert!(colours.contains(&&canvas.get_pixel(x, y).0[..]));
            }
        }
    }

    #[test]
    fn bad_settings_and_batches_are_rejected() {
        let mut config = RecordConfig::new(4, 210, 160);
        config.cols = Some(5);
        assert!(matches!(Grid::new(&config), Err(RecordError::InvalidArgument(_))));
        config.cols = None;
        config.scale = Some(f64::NAN);
        assert!(Grid::new(&config).is_err());
        config.scale = Some(8.0);
        config.num_frames = 4096;
        assert!(Grid::new(&config).unwrap_err().to_string().contains("larger than"));
        let grid = Grid::new(&RecordConfig::new(4, 210, 160)).unwrap();
        assert!(grid.compose(&[0; 10]).is_err());
        assert!(Grid::new(&RecordConfig::new(usize::MAX, usize::MAX, 2)).is_err());
        let mut huge = RecordConfig::new(1 << 16, 1 << 14, 1 << 14);
        huge.scale = Some(1.0);
        assert!(Grid::new(&huge).unwrap_err().to_string().contains("larger than"));
    }
}
