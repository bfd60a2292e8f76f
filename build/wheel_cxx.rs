//! `TORCHWM_WHEEL_CXX`: the C++ compiler of the portable (manylinux) wheel, with its C++ runtime
//! linked in statically.
//!
//! `maturin build --zig` links against glibc 2.28's symbols (the wheel's floor), and would compile the
//! C++ with zig's clang, whose emulator is 6-14% slower than GCC's (docs/how_it_got_fast.md). With this set
//! to GCC's `g++`, GCC compiles ALE and the shim while zig still links; GCC's libstdc++ then cannot be
//! a shared library (the one a glibc 2.28 system has is older), so its static archive goes in, with
//! `src/ffi/glibc_compat.cpp` for the two newer glibc symbols it refers to. Unset: the compiler cargo
//! or maturin chose, and its C++ runtime as a shared library.
use std::path::PathBuf;
use std::process::Command;

pub const ENV_VAR: &str = "TORCHWM_WHEEL_CXX";

/// The compiler `TORCHWM_WHEEL_CXX` names and the static libstdc++ it links with.
pub struct WheelCxx {
    pub compiler: PathBuf,
    pub static_libstdcxx: PathBuf,
}

impl WheelCxx {
    /// `None` when `TORCHWM_WHEEL_CXX` is unset or empty; an error when the compiler cannot be run
    /// or has no static libstdc++.
    pub fn from_env() -> Result<Option<Self>, String> {
        let Some(compiler) = std::env::var_os(ENV_VAR).filter(|v| !v.is_empty()).map(PathBuf::from) else {
            return Ok(None);
        };
        let output = Command::new(&compiler)
            .arg("-print-file-name=libstdc++.a")
            .output()
            .map_err(|e| format!("{ENV_VAR}={}: cannot run it: {e}", compiler.display()))?;
        let archive = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        // A compiler that does not know the file prints its bare name back.
        if !output.status.success() || !archive.is_absolute() || !archive.is_file() {
            return Err(format!(
                "{ENV_VAR}={}: expected GCC's g++ (or a compiler using GCC's libstdc++) with the static \
                 libstdc++.a installed; `-print-file-name=libstdc++.a` gave {:?}",
                compiler.display(),
                archive
            ));
        }
        Ok(Some(WheelCxx { compiler, static_libstdcxx: archive }))
    }

    /// Puts the static libstdc++ on the link line.
    pub fn link_static_libstdcxx(&self) {
        if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("windows") {
            // Before MinGW's C runtime libraries, which rustc names last and libstdc++ needs.
            let dir = self.static_libstdcxx.parent().expect("an absolute file path has a parent");
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static:-bundle=stdc++");
        } else {
            // After every library of ours (link arguments come last), so it provides what they need.
            println!("cargo:rustc-link-arg={}", self.static_libstdcxx.display());
        }
    }
}
