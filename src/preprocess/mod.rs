//! Frame operations of the standard Atari preprocessing, on plain `u8` buffers (no allocation per call).
mod frame_stack;
mod grayscale;
mod maxpool;
mod resize;

pub use frame_stack::FrameStack;
pub use grayscale::{GrayPalette, GrayPooler};
pub use maxpool::maxpool_into;
pub use resize::Resizer;
