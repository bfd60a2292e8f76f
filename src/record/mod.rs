//! Recording many envs' RGB frames as pictures: each step's frames tiled into one grid image
//! (`grid`), written as an animated GIF or numbered PNG stills (`sink`) by a background thread
//! fed through a bounded channel (`recorder`), so the stepping thread only hands frames over.
mod config;
mod error;
mod grid;
mod recorder;
mod sink;

pub use config::{ImageFormat, RecordConfig};
pub use error::RecordError;
pub use grid::Grid;
pub use recorder::{RecordSummary, Recorder};
