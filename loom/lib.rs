//! Empty: the model checks are the tests (see Cargo.toml).
