//! Linux only: whether this process uses Linux's implementation of each facility that differs between
//! systems, or the portable one that every other system (macOS) always gets. `TORCHWM_PORTABLE=1`
//! picks the portable ones, so that Linux's tests run them too (docs/platforms.md).
use std::ffi::OsStr;
use std::sync::OnceLock;

const ENV_VAR: &str = "TORCHWM_PORTABLE";

/// Whether this process uses the portable implementations. Read once: a process's doorbells must
/// not change how they sleep and wake while others share them (its workers inherit the variable).
pub(crate) fn portable() -> bool {
    static PORTABLE: OnceLock<bool> = OnceLock::new();
    *PORTABLE.get_or_init(|| requested(std::env::var_os(ENV_VAR).as_deref()))
}

/// Whether `TORCHWM_PORTABLE`'s value asks for the portable implementations: only `1` does.
fn requested(value: Option<&OsStr>) -> bool {
    value.is_some_and(|value| value == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_asks_for_the_portable_implementations() {
        assert!(requested(Some(OsStr::new("1"))));
        for value in ["", "0", "true", " 1"] {
            assert!(!requested(Some(OsStr::new(value))), "{value:?}");
        }
        assert!(!requested(None));
    }
}
