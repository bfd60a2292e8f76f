//! Frame operations of the standard Atari preprocessing, on plain `u8` buffers (no allocation per call).
mod frame_stack;
mod palette_pool;
mod resize;

pub use frame_stack::FrameStack;
pub use palette_pool::{FramePooler, Palette};
pub use resize::Resizer;
