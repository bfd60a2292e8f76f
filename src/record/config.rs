//! Every recording setting, defined and validated here.
use std::path::Path;

use super::error::RecordError;

/// Automatic scale: frames shrink by a whole factor until the grid is at most this wide.
pub(super) const AUTO_MAX_WIDTH: usize = 480;
/// GIF stores sizes as 16-bit numbers; a larger grid is refused for every format alike.
pub(super) const MAX_CANVAS_SIDE: usize = u16::MAX as usize;
const MAX_SCALE: f64 = 8.0;
const MAX_FRAMES: usize = 1 << 16;
const MAX_FRAME_SIDE: usize = 1 << 14;
const MAX_PADDING: usize = 64;
/// GIF delays are whole hundredths of a second, so 100 frames/s is the fastest a GIF plays.
const MAX_FPS: f64 = 100.0;

/// What the recorder writes, chosen by the output path's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// `.gif`: one animated GIF, one grid image per recorded step.
    Gif,
    /// `.png`: one PNG still per recorded step, `<stem>_<step:05>.png` beside the path.
    PngStills,
}

impl ImageFormat {
    pub fn from_path(path: &Path) -> Result<Self, RecordError> {
        let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("gif") => Ok(Self::Gif),
            Some("png") => Ok(Self::PngStills),
            _ => Err(RecordError::InvalidArgument(format!(
                "the output path must end in .gif (animation) or .png (stills), got {}",
                path.display()
            ))),
        }
    }
}

/// How many frames of what size each step brings, and how the grid shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordConfig {
    /// Frames per step (one per env).
    pub num_frames: usize,
    pub frame_height: usize,
    pub frame_width: usize,
    /// Grid columns; `None`: the smallest square grid that holds every frame.
    pub cols: Option<usize>,
    /// Size factor of each frame (nearest-neighbour, so colours stay exact); `None`: 1/k with the
    /// smallest whole k that keeps the grid at most 480 pixels wide.
    pub scale: Option<f64>,
    /// Black pixels between tiles.
    pub padding: usize,
    /// Playback speed of a GIF, frames per second.
    pub fps: f64,
}

impl RecordConfig {
    pub fn new(num_frames: usize, frame_height: usize, frame_width: usize) -> Self {
        Self { num_frames, frame_height, frame_width, cols: None, scale: None, padding: 2, fps: 15.0 }
    }

    pub fn validate(&self) -> Result<(), RecordError> {
        let invalid = |message: String| Err(RecordError::InvalidArgument(message));
        let side_ok = |side: usize| (1..=MAX_FRAME_SIDE).contains(&side);
        if !(1..=MAX_FRAMES).contains(&self.num_frames) || !side_ok(self.frame_height) || !side_ok(self.frame_width) {
            return invalid(format!(
                "frames must be a batch of 1 to {MAX_FRAMES} images of 1 to {MAX_FRAME_SIDE} pixels a side, \
                 got {} frames of {}x{}",
                self.num_frames, self.frame_height, self.frame_width
            ));
        }
        if let Some(cols) = self.cols {
            if !(1..=self.num_frames).contains(&cols) {
                return invalid(format!("cols must be in [1, {}] (the number of frames), got {cols}", self.num_frames));
            }
        }
        if let Some(scale) = self.scale {
            if !(scale.is_finite() && scale > 0.0 && scale <= MAX_SCALE) {
                return invalid(format!("scale must be a number in (0, {MAX_SCALE}], got {scale}"));
            }
        }
        if self.padding > MAX_PADDING {
            return invalid(format!("padding must be in [0, {MAX_PADDING}], got {}", self.padding));
        }
        if !(self.fps.is_finite() && self.fps > 0.0 && self.fps <= MAX_FPS) {
            return invalid(format!("fps must be a number in (0, {MAX_FPS}], got {}", self.fps));
        }
        Ok(())
    }
}
