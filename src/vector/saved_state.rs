//! Saved env states as bytes (`AtariVectorEnv.clone_states` / `restore_states`).
//!
//! Layout: `TWMSTATE`, a CRC-32 (little-endian) of the rest, then in postcard the header (state format,
//! torchwm and ALE versions, game, settings) and the env's state, zlib-compressed (the frames in it
//! compress well). A state is refused, before any env is touched, when it is damaged or truncated,
//! comes from another torchwm version, or was saved from another game or with other settings.
use std::io::{Read, Write};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};

use crate::ale::ALE_VERSION;
use crate::atari::{AtariEnvState, StepOutput};
use crate::error::{Error, Result};

const MAGIC: &[u8; 8] = b"TWMSTATE";
/// Bumped whenever what is saved changes.
const FORMAT: u32 = 1;
const TORCHWM_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Far above any real state (about 150 KB before compression): a bound for the decompressor.
const MAX_STATE_BYTES: u64 = 64 << 20;

/// One env of a vector env: its [`AtariEnvState`] and what the vectorizer keeps beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SlotState {
    pub env: AtariEnvState,
    /// What the env's last job reported (an ended episode keeps reporting it with autoreset off).
    pub output: StepOutput,
    /// Next-step autoreset: the reset the next step takes, already run.
    pub reset_ahead: Option<SavedReset>,
}

/// A reset that ran ahead: its output, and the ended episode's observation and RGB screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SavedReset {
    pub output: StepOutput,
    pub ended_obs: Vec<u8>,
    pub ended_screen: Vec<u8>,
}

/// What a state must have been saved with to be restored into an env.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StateKey {
    pub game: String,
    /// Every setting of the env and the vectorizer that shapes what a step does.
    pub settings: String,
}

#[derive(Serialize, Deserialize)]
struct Header {
    format: u32,
    torchwm: String,
    ale: String,
    key: StateKey,
}

pub(crate) fn encode(key: &StateKey, slot: &SlotState) -> Result<Vec<u8>> {
    let header = Header { format: FORMAT, torchwm: TORCHWM_VERSION.into(), ale: ALE_VERSION.into(), key: key.clone() };
    let body = postcard::to_allocvec(slot).map_err(|e| encoding_failed(&e))?;
    let mut compressor = ZlibEncoder::new(Vec::new(), Compression::fast());
    compressor.write_all(&body).map_err(|e| encoding_failed(&e))?;
    let body = compressor.finish().map_err(|e| encoding_failed(&e))?;
    let payload = postcard::to_allocvec(&(header, body)).map_err(|e| encoding_failed(&e))?;
    let mut bytes = Vec::with_capacity(MAGIC.len() + 4 + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

/// The state in `bytes`, if it was saved by this torchwm from an env with `key`.
pub(crate) fn decode(key: &StateKey, bytes: &[u8]) -> Result<SlotState> {
    let payload = bytes
        .strip_prefix(MAGIC)
        .ok_or_else(|| refused("these bytes are not a torchwm env state (AtariVectorEnv.clone_states makes them)"))?;
    let (checksum, payload) = payload.split_first_chunk::<4>().ok_or_else(damaged)?;
    if crc32fast::hash(payload) != u32::from_le_bytes(*checksum) {
        return Err(damaged());
    }
    let (header, body): (Header, Vec<u8>) = postcard::from_bytes(payload).map_err(|_| damaged())?;
    if (header.format, header.torchwm.as_str(), header.ale.as_str()) != (FORMAT, TORCHWM_VERSION, ALE_VERSION) {
        return Err(refused(&format!(
            "the state was saved by torchwm {} (ALE {}, state format {}); this is torchwm {TORCHWM_VERSION} (ALE \
             {ALE_VERSION}, state format {FORMAT}): states restore only into the version that saved them",
            header.torchwm, header.ale, header.format
        )));
    }
    if header.key.game != key.game {
        return Err(refused(&format!(
            "the state is of {}, and this env plays {}: a state restores only into an env of its game",
            header.key.game, key.game
        )));
    }
    if header.key.settings != key.settings {
        return Err(refused(&format!(
            "the state was saved with other settings: it has\n  {}\nand this env has\n  {}",
            header.key.settings, key.settings
        )));
    }
    let mut body_bytes = Vec::new();
    ZlibDecoder::new(body.as_slice()).take(MAX_STATE_BYTES).read_to_end(&mut body_bytes).map_err(|_| damaged())?;
    postcard::from_bytes(&body_bytes).map_err(|_| damaged())
}

fn refused(why: &str) -> Error {
    Error::InvalidArgument(format!("cannot restore this env state: {why}"))
}

fn damaged() -> Error {
    refused("it is damaged or truncated (its checksum or encoding does not match)")
}

fn encoding_failed(error: &dyn std::fmt::Display) -> Error {
    Error::InvalidState(format!("cannot encode the env state: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> StateKey {
        StateKey { game: "pong".into(), settings: "frame_skip: 4".into() }
    }

    /// Bytes as `encode` frames them, around any header and body.
    fn framed(header: &Header, body: &[u8]) -> Vec<u8> {
        let payload = postcard::to_allocvec(&(header, body)).unwrap();
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        bytes.extend_from_slice(&payload);
        bytes
    }

    fn refusal(bytes: &[u8]) -> String {
        match decode(&key(), bytes) {
            Err(Error::InvalidArgument(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn states_of_another_version_or_format_are_refused_before_their_body_is_read() {
        let header = |torchwm: &str, format: u32| Header {
            format,
            torchwm: torchwm.into(),
            ale: ALE_VERSION.into(),
            key: key(),
        };
        let message = refusal(&framed(&header("0.0.1", FORMAT), b"anything"));
        assert!(message.contains("saved by torchwm 0.0.1") && message.contains(TORCHWM_VERSION), "{message}");
        let message = refusal(&framed(&header(TORCHWM_VERSION, FORMAT + 1), b"anything"));
        assert!(message.contains(&format!("state format {}", FORMAT + 1)), "{message}");
        // This version and format, with a body that is not a compressed state.
        let message = refusal(&framed(&header(TORCHWM_VERSION, FORMAT), b"anything"));
        assert!(message.contains("damaged or truncated"), "{message}");
    }

    #[test]
    fn a_key_of_another_game_or_settings_is_named() {
        let mut header =
            Header { format: FORMAT, torchwm: TORCHWM_VERSION.into(), ale: ALE_VERSION.into(), key: key() };
        header.key.game = "breakout".into();
        assert!(refusal(&framed(&header, b"")).contains("of breakout, and this env plays pong"));
        header.key = StateKey { settings: "frame_skip: 2".into(), ..key() };
        let message = refusal(&framed(&header, b""));
        assert!(message.contains("frame_skip: 2") && message.contains("frame_skip: 4"), "{message}");
    }
}
