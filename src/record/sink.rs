//! Where grid images go: frames of one animated GIF, or numbered PNG stills.
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, Frame, RgbImage};

use super::config::ImageFormat;
use super::error::RecordError;

/// GIF colour search effort, 1 (best) to 30 (fastest). Atari frames scaled by nearest neighbour have
/// at most 256 colours, which the encoder keeps exactly without any search; this only matters for
/// frames of more colours.
const GIF_SPEED: i32 = 10;

pub(crate) enum Sink {
    Gif {
        encoder: GifEncoder<FlushedFile>,
        delay: Delay,
        path: PathBuf,
        flush_error: Arc<Mutex<Option<std::io::Error>>>,
    },
    PngStills {
        dir: PathBuf,
        stem: String,
        next_index: usize,
    },
}

impl Sink {
    /// Creates the output now, so a bad path fails before any frame is recorded.
    pub fn create(path: &Path, format: ImageFormat, fps: f64) -> Result<Self, RecordError> {
        match format {
            ImageFormat::Gif => {
                let file = File::create(path).map_err(|e| io_error(path, e))?;
                let flush_error = Arc::new(Mutex::new(None));
                let writer = FlushedFile { writer: BufWriter::new(file), flush_error: Arc::clone(&flush_error) };
                let mut encoder = GifEncoder::new_with_speed(writer, GIF_SPEED);
                encoder.set_repeat(Repeat::Infinite).map_err(|e| encode_error(path, e))?;
                // GIF delays are whole hundredths of a second: round to the nearest one.
                let delay = Delay::from_numer_denom_ms(((100.0 / fps).round() as u32).max(1) * 10, 1);
                Ok(Self::Gif { encoder, delay, path: path.to_path_buf(), flush_error })
            }
            ImageFormat::PngStills => {
                let dir = match path.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                if !dir.is_dir() {
                    return Err(RecordError::MissingFolder {
                        path: path.display().to_string(),
                        folder: dir.display().to_string(),
                    });
                }
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                Ok(Self::PngStills { dir, stem, next_index: 0 })
            }
        }
    }

    pub fn write(&mut self, image: RgbImage) -> Result<(), RecordError> {
        match self {
            Self::Gif { encoder, delay, path, .. } => {
                let rgba = image::DynamicImage::ImageRgb8(image).into_rgba8();
                encoder.encode_frame(Frame::from_parts(rgba, 0, 0, *delay)).map_err(|e| encode_error(path, e))
            }
            Self::PngStills { dir, stem, next_index } => {
                let path = dir.join(still_name(stem, *next_index));
                image.save_with_format(&path, image::ImageFormat::Png).map_err(|e| encode_error(&path, e))?;
                *next_index += 1;
                Ok(())
            }
        }
    }

    /// Ends the GIF (its encoder writes the trailer when dropped) and reports a failed last write.
    /// A GIF of no frames would be an empty, invalid file: it is removed.
    pub fn finish(self, images_written: usize) -> Result<(), RecordError> {
        if let Self::Gif { encoder, path, flush_error, .. } = self {
            drop(encoder);
            if let Some(error) = flush_error.lock().map_or(None, |mut e| e.take()) {
                return Err(io_error(&path, error));
            }
            if images_written == 0 {
                std::fs::remove_file(&path).map_err(|e| io_error(&path, e))?;
            }
        }
        Ok(())
    }
}

/// The GIF file. image's `GifEncoder` never hands its writer back, so this writer flushes itself when
/// the encoder drops it and keeps the error of that last write for [`Sink::finish`].
pub(crate) struct FlushedFile {
    writer: BufWriter<File>,
    flush_error: Arc<Mutex<Option<std::io::Error>>>,
}

impl Write for FlushedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.flush()
    }
}

impl Drop for FlushedFile {
    fn drop(&mut self) {
        if let Err(error) = self.writer.flush() {
            if let Ok(mut slot) = self.flush_error.lock() {
                slot.get_or_insert(error);
            }
        }
    }
}

/// The file name of PNG still number `index` of a recording to `<stem>.png`.
pub fn still_name(stem: &str, index: usize) -> String {
    format!("{stem}_{index:05}.png")
}

fn io_error(path: &Path, error: std::io::Error) -> RecordError {
    RecordError::Io { path: path.display().to_string(), source: Arc::new(error) }
}

fn encode_error(path: &Path, error: image::ImageError) -> RecordError {
    RecordError::Encode { path: path.display().to_string(), source: Arc::new(error) }
}
