//! The vectors of the TIA's span blocks (`src/ffi/tia/simd.h`, SSE2 on x86-64, NEON on AArch64): each
//! function checked lane by lane against what it promises (`tests/tia_simd/check.cpp`), compiled with
//! the C++ compilers that build ALE. The blocks' pixels are checked against ale_py by the parity
//! tests; this names the function when one target's vectors go wrong, and checks the NEON functions
//! on x86-64 too where a cross compiler and qemu are installed.
use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Compiles the check with `compiler` (and `flags`) into the test's temporary directory.
fn compile_check(compiler: &str, flags: &[&str], name: &str) -> PathBuf {
    let root = Path::new(MANIFEST_DIR);
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let output = Command::new(compiler)
        .args(["-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror"])
        .args(flags)
        .arg("-I")
        .arg(root.join("src/ffi"))
        .arg(root.join("tests/tia_simd/check.cpp"))
        .arg("-o")
        .arg(&binary)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler `{compiler}`: {e}"));
    assert!(output.status.success(), "{compiler} failed:\n{}", String::from_utf8_lossy(&output.stderr));
    binary
}

/// Runs the check (through `runner`, if any) and fails the test on any mismatch.
fn run_check(runner: Option<&str>, binary: &Path) {
    let mut command = match runner {
        Some(runner) => Command::new(runner),
        None => Command::new(binary),
    };
    if runner.is_some() {
        command.arg(binary);
    }
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{} ({:?}):\n{stdout}", binary.display(), output.status);
}

fn on_path(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn span_vectors_do_what_they_promise_on_this_target() {
    // SSE2 and NEON are the baselines of x86-64 and AArch64: there the check must find vectors
    // (it exits 2 where simd.h has none, and fails the test).
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    run_check(None, &compile_check(&compiler, &[], "tia_simd_check"));
    if compiler != "clang++" && on_path("clang++") {
        run_check(None, &compile_check("clang++", &[], "tia_simd_check_clang"));
    }
}

#[test]
fn span_vectors_do_what_they_promise_on_aarch64_under_qemu() {
    let (cross, qemu) = ("aarch64-linux-gnu-g++", "qemu-aarch64");
    if cfg!(target_arch = "aarch64") || !on_path(cross) || !on_path(qemu) {
        eprintln!("skipped: needs {cross} and {qemu} on a host that is not AArch64 (there the other test runs NEON)");
        return;
    }
    run_check(Some(qemu), &compile_check(cross, &["-static"], "tia_simd_check_aarch64"));
}
