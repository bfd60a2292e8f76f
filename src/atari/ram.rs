//! `Ram`: the console's 128 bytes of RAM, as a step reports them and a saved state keeps them.
use serde::{Deserialize, Serialize};

use crate::ale::RAM_SIZE;

/// The console's 128 bytes of RAM (ale_py's `getRAM()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ram(pub [u8; RAM_SIZE]);

impl Default for Ram {
    fn default() -> Self {
        Self([0; RAM_SIZE])
    }
}

impl Serialize for Ram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        self.0.as_slice().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Ram {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let bytes = Vec::<u8>::deserialize(deserializer)?;
        let ram: [u8; RAM_SIZE] = bytes
            .try_into()
            .map_err(|bytes: Vec<u8>| serde::de::Error::invalid_length(bytes.len(), &"128 bytes of RAM"))?;
        Ok(Ram(ram))
    }
}
