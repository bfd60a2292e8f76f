//! `Recorder`: hands each step's frames to an encoder thread through a bounded channel, so the
//! stepping thread pays for a copy only; tiling, scaling and encoding happen on the encoder thread.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use super::config::{ImageFormat, RecordConfig};
use super::error::RecordError;
use super::grid::Grid;
use super::sink::Sink;
use crate::error::panic_message;
use crate::ffi::fork_generation;

/// Batches waiting for the encoder. When it falls this far behind, `push` waits for it, which bounds
/// memory (16 Atari frames are 1.6 MB a batch).
const QUEUE_CAPACITY: usize = 8;

/// What a finished recording wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSummary {
    pub path: PathBuf,
    pub format: ImageFormat,
    /// Grid images written: GIF frames, or PNG files.
    pub images_written: usize,
    pub width: usize,
    pub height: usize,
}

pub struct Recorder {
    grid: Grid,
    path: PathBuf,
    format: ImageFormat,
    batches: Option<Sender<Vec<u8>>>,
    encoder: Option<JoinHandle<Result<usize, RecordError>>>,
    /// The encoder's failure, reported again by every later call.
    failure: Option<RecordError>,
    summary: Option<RecordSummary>,
    fork_generation: u64,
}

impl Recorder {
    /// Validates `config`, creates the output at `path` (`.gif` or `.png`) and starts the encoder.
    pub fn create(path: &Path, config: &RecordConfig) -> Result<Self, RecordError> {
        let grid = Grid::new(config)?;
        let format = ImageFormat::from_path(path)?;
        let sink = Sink::create(path, format, config.fps)?;
        let (sender, receiver) = crossbeam_channel::bounded(QUEUE_CAPACITY);
        let encoder_grid = grid.clone();
        let encoder = std::thread::Builder::new()
            .name("torchwm-record".into())
            .spawn(move || encode_all(&encoder_grid, sink, receiver))
            .map_err(|e| RecordError::EncoderThread { path: path.display().to_string(), source: Arc::new(e) })?;
        Ok(Self {
            grid,
            path: path.to_path_buf(),
            format,
            batches: Some(sender),
            encoder: Some(encoder),
            failure: None,
            summary: None,
            fork_generation: fork_generation(),
        })
    }

    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Queues one step's frames, `(num_frames, height, width, 3)` RGB bytes. Waits only while the
    /// encoder is `QUEUE_CAPACITY` batches behind. A batch of the wrong size is refused and the
    /// recorder stays usable.
    pub fn push(&mut self, frames: Vec<u8>) -> Result<(), RecordError> {
        self.check_open()?;
        if frames.len() != self.grid.batch_bytes() {
            return Err(RecordError::InvalidArgument(format!(
                "expected {} frames of {}x{}x3 uint8 ({} bytes), got {} bytes",
                self.grid.num_frames,
                self.grid.frame_height,
                self.grid.frame_width,
                self.grid.batch_bytes(),
                frames.len()
            )));
        }
        let sender = self.batches.as_ref().expect("open");
        if sender.send(frames).is_err() {
            // The encoder stopped early: it failed, and `finish` brings its error back.
            return Err(self.finish().err().unwrap_or(RecordError::Closed));
        }
        Ok(())
    }

    /// Waits for every queued batch to be written and closes the file. Idempotent: later calls
    /// return the same summary (or error).
    pub fn finish(&mut self) -> Result<RecordSummary, RecordError> {
        if let Some(summary) = &self.summary {
            return Ok(summary.clone());
        }
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        self.check_not_forked()?;
        self.batches = None;
        let joined = self.encoder.take().expect("running until finished").join();
        let result = match joined {
            Ok(Ok(images_written)) => Ok(RecordSummary {
                path: self.path.clone(),
                format: self.format,
                images_written,
                width: self.grid.canvas_width,
                height: self.grid.canvas_height,
            }),
            Ok(Err(error)) => Err(error),
            Err(panic) => Err(RecordError::EncoderPanic(panic_message(panic.as_ref()))),
        };
        match &result {
            Ok(summary) => self.summary = Some(summary.clone()),
            Err(error) => self.failure = Some(error.clone()),
        }
        result
    }

    pub fn is_finished(&self) -> bool {
        self.encoder.is_none()
    }

    /// After `fork()` the encoder thread is gone: waiting on it would hang.
    fn check_not_forked(&self) -> Result<(), RecordError> {
        if self.fork_generation != fork_generation() {
            return Err(RecordError::Forked);
        }
        Ok(())
    }

    fn check_open(&self) -> Result<(), RecordError> {
        self.check_not_forked()?;
        match (&self.failure, self.is_finished()) {
            (Some(failure), _) => Err(failure.clone()),
            (None, true) => Err(RecordError::Closed),
            (None, false) => Ok(()),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if !self.is_finished() && self.fork_generation == fork_generation() {
            let _ = self.finish();
        }
    }
}

/// The encoder thread: composes and writes each batch until the channel closes or a write fails.
fn encode_all(grid: &Grid, mut sink: Sink, batches: Receiver<Vec<u8>>) -> Result<usize, RecordError> {
    let mut written = 0;
    for frames in batches {
        sink.write(grid.compose(&frames)?)?;
        written += 1;
    }
    sink.finish(written)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::AnimationDecoder;
    use std::fs::File;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("torchwm-record-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Frames of a few palette colours, different per step, like Atari screens.
    fn step_frames(step: usize, config: &RecordConfig) -> Vec<u8> {
        let pixels = config.num_frames * config.frame_height * config.frame_width;
        (0..pixels).flat_map(|i| [((i / 7 + step) % 4 * 60) as u8, (i % 3 * 90) as u8, (step * 40) as u8]).collect()
    }

    #[test]
    fn gif_frames_decode_to_the_composed_grids() {
        let mut config = RecordConfig::new(3, 12, 10);
        config.scale = Some(1.0);
        let path = scratch("gif").join("out.gif");
        let mut recorder = Recorder::create(&path, &config).unwrap();
        let batches: Vec<Vec<u8>> = (0..4).map(|step| step_frames(step, &config)).collect();
        for batch in &batches {
            recorder.push(batch.clone()).unwrap();
        }
        assert!(recorder.push(vec![0; 5]).is_err(), "a batch of the wrong size is refused");
        let summary = recorder.finish().unwrap();
        assert_eq!((summary.images_written, summary.width, summary.height), (4, 22, 26));
        assert_eq!(recorder.finish().unwrap(), summary, "finish is idempotent");
        assert!(matches!(recorder.push(batches[0].clone()), Err(RecordError::Closed)));
        let decoder = image::codecs::gif::GifDecoder::new(std::io::BufReader::new(File::open(&path).unwrap())).unwrap();
        let frames = decoder.into_frames().collect_frames().unwrap();
        assert_eq!(frames.len(), 4);
        for (frame, batch) in frames.into_iter().zip(&batches) {
            let expected = image::DynamicImage::ImageRgb8(recorder.grid().compose(batch).unwrap()).into_rgba8();
            assert_eq!(frame.into_buffer(), expected);
        }
    }

    #[test]
    fn png_stills_are_numbered_and_exact() {
        let config = RecordConfig::new(2, 8, 6);
        let dir = scratch("png");
        let mut recorder = Recorder::create(&dir.join("still.png"), &config).unwrap();
        let batches: Vec<Vec<u8>> = (0..2).map(|step| step_frames(step, &config)).collect();
        for batch in &batches {
            recorder.push(batch.clone()).unwrap();
        }
        assert_eq!(recorder.finish().unwrap().images_written, 2);
        for (index, batch) in batches.iter().enumerate() {
            let still = image::open(dir.join(super::super::sink::still_name("still", index))).unwrap().into_rgb8();
            assert_eq!(still, recorder.grid().compose(batch).unwrap());
        }
    }

    #[test]
    fn bad_paths_fail_at_creation() {
        let config = RecordConfig::new(1, 4, 4);
        let missing = scratch("bad").join("no-such-dir");
        assert!(matches!(Recorder::create(&missing.join("x.gif"), &config), Err(RecordError::Io { .. })));
        assert!(matches!(Recorder::create(&missing.join("x.png"), &config), Err(RecordError::MissingFolder { .. })));
        assert!(matches!(Recorder::create(&missing.join("x.mp4"), &config), Err(RecordError::InvalidArgument(_))));
    }

    #[test]
    fn an_empty_gif_is_not_left_behind() {
        let path = scratch("empty").join("none.gif");
        let mut recorder = Recorder::create(&path, &RecordConfig::new(1, 4, 4)).unwrap();
        assert_eq!(recorder.finish().unwrap().images_written, 0);
        assert!(!path.exists());
    }
}
