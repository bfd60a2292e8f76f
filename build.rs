//! Builds the Arcade Learning Environment (C++) from its pinned source, and our C++ shim over it
//! (`src/ffi/ale_shim.cpp`), as two static libraries.
//!
//! - The ALE version is the `ale-py==X` pin in pyproject.toml, the one place it is written; it is
//!   checked against a known sha256 (`build/ale_source.rs`) and passed on to the crate as
//!   `TORCHWM_ALE_VERSION`.
//! - ALE is compiled from its source with our edits (`build/ale_edits.rs`, which reach the C++ in
//!   `src/ffi/tia/`, `src/ffi/cpu/`, `src/ffi/ale_env/` and `src/ffi/rng/`), warnings off (its code,
//!   not ours). Its library is reused while nothing it is built from changed, so changing the shim does
//!   not recompile ALE.
//! - The shim is compiled on its own with warnings on; ALE's headers are system headers to it.
//! - `TORCHWM_WHEEL_CXX=g++` (the portable wheel's build, scripts/test.sh): GCC compiles the C++ under
//!   `maturin --zig`, and its libstdc++ is linked in statically (`build/wheel_cxx.rs`).
//! - `TORCHWM_SANITIZE=address,undefined` (any of the two) builds both with those sanitizers and
//!   links their runtimes into every binary (see scripts/sanitize.sh).
//! - `TORCHWM_CHECK_ONLY=1` compiles no C++ at all, for `cargo clippy` and `cargo check`, which link
//!   nothing: the macOS clippy in CI (scripts/macos_wheel.sh) would otherwise compile ALE with zig's clang
//!   once more, for nothing. Anything that links then fails on ALE's symbols.
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

#[path = "build/ale_bank_edits.rs"]
mod ale_bank_edits;
#[path = "build/ale_edits.rs"]
mod ale_edits;
#[path = "build/ale_source.rs"]
mod ale_source;
#[path = "build/ale_units.rs"]
mod ale_units;
#[path = "build/threaded_dispatch.rs"]
mod threaded_dispatch;
#[path = "build/wheel_cxx.rs"]
mod wheel_cxx;

use ale_source::AleRelease;
use wheel_cxx::WheelCxx;

/// The sanitizers `TORCHWM_SANITIZE` may name.
const SANITIZERS: [&str; 2] = ["address", "undefined"];

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    declare_inputs(&manifest_dir).unwrap_or_else(|message| fail(&message));

    let release = AleRelease::pinned(&manifest_dir.join("pyproject.toml")).unwrap_or_else(|m| fail(&m));
    println!("cargo:rustc-env=TORCHWM_ALE_VERSION={}", release.version);
    if check_only().unwrap_or_else(|m| fail(&m)) {
        println!("cargo:warning=TORCHWM_CHECK_ONLY=1: no C++ compiled, so nothing built now can link");
        return;
    }
    let ale_src = release.source_root(&out_dir).unwrap_or_else(|m| fail(&m)).join("src");
    let generated = out_dir.join("generated");
    let units = generate_sources(&generated, &ale_src, &release).unwrap_or_else(|m| fail(&m));
    let sanitize = sanitize_flags().unwrap_or_else(|m| fail(&m));
    let wheel_cxx = WheelCxx::from_env().unwrap_or_else(|m| fail(&m));

    // rustc links with -nodefaultlibs, so `-fsanitize` at link time would not bring the runtimes; and
    // ASan's must be the first shared library loaded, so it is named before the C++ runtime.
    for runtime in sanitizer_runtimes() {
        println!("cargo:rustc-link-lib=dylib={runtime}");
    }
    // The shim first: its objects need ALE's, and a static library must come before those it needs.
    compile_shim(&manifest_dir, &generated, &ale_src, &sanitize, wheel_cxx.as_ref());
    let ale = ale_build(&manifest_dir, &generated, &ale_src, &sanitize, wheel_cxx.as_ref(), &units);
    let edits = ["tia", "cpu", "ale_env", "rng"].map(|dir| manifest_dir.join("src/ffi").join(dir));
    compile_ale(&ale, &out_dir, &ale_src, &generated, &edits).unwrap_or_else(|m| fail(&m));
    // libz-sys (static) provides zlib; the C++ runtime is linked by cc's compile() for us, or here (wheel_cxx):
    // after both of our libraries, which need it.
    if let Some(wheel_cxx) = &wheel_cxx {
        wheel_cxx.link_static_libstdcxx();
    }
}

/// Compiles our C++ shim over ALE (`libtorchwm_shim.a`), warnings on; with `wheel_cxx` (Linux), the
/// glibc compatibility symbols too.
fn compile_shim(
    manifest_dir: &Path,
    generated: &Path,
    ale_src: &Path,
    sanitize: &[String],
    wheel_cxx: Option<&WheelCxx>,
) {
    let mut shim = cpp_build(generated, ale_src, sanitize, wheel_cxx, true);
    shim.warnings(true).extra_warnings(true).flag("-Wshadow").flag("-Wconversion");
    // ALE's edited headers include our `.inc` files from `src/ffi` (`ale_env/`).
    shim.include(manifest_dir.join("src/ffi"));
    shim.file(manifest_dir.join("src/ffi/ale_shim.cpp"));
    if wheel_cxx.is_some() && env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        shim.file(manifest_dir.join("src/ffi/glibc_compat.cpp"));
    }
    shim.compile("torchwm_shim");
}

/// ALE's build: its unity `units`, warnings off, and the code-generation flags its hot loops want.
fn ale_build(
    manifest_dir: &Path,
    generated: &Path,
    ale_src: &Path,
    sanitize: &[String],
    wheel_cxx: Option<&WheelCxx>,
    units: &[PathBuf],
) -> cc::Build {
    let mut ale = cpp_build(generated, ale_src, sanitize, wheel_cxx, false);
    // ALE's code is not ours to fix: its warnings stay off. `src/ffi` holds the `tia/`, `cpu/`, `ale_env/`
    // and `rng/` files its edited copies include.
    ale.warnings(false).flag_if_supported("-w").include(manifest_dir.join("src/ffi")).files(units);
    // Every function starts a 64-byte line, so the hot loops' alignment (relative to the function)
    // is the same wherever the linker places them: in the cdylib `M6502Low::execute` landed 16 bytes
    // past a line, in the example binary on one. CPU time per frame 1.00x-1.03x (docs/how_it_got_fast.md).
    ale.flag("-falign-functions=64");
    // clang (zig's, or a system clang++ as CXX) merges the 6502 loop's threaded dispatch into 18 shared
    // indirect jumps, against GCC's 222 (one per instruction case), because LLVM (18 and later) tail-
    // duplicates no block with more than 16 predecessors or successors: a dispatch jump shared by every
    // case predicts the next opcode badly. Raising the limits restores one jump per case (docs/how_it_got_fast.md).
    // GCC, and clang builds that lack the options, reject the flags and go without.
    for limit in ["-mllvm=-tail-dup-pred-size=1000", "-mllvm=-tail-dup-succ-size=1000"] {
        ale.flag_if_supported(limit);
    }
    // zig's clang keeps the frame pointer at every optimization level (GCC drops it from -O1 on, so
    // the flag changes nothing there): one general register fewer, and the hot loops of
    // updateFrameScanline and poke spilled to the stack for it. Not with the sanitizers, whose
    // -fno-omit-frame-pointer keeps their stacks readable (docs/how_it_got_fast.md).
    if sanitize.is_empty() {
        ale.flag("-fomit-frame-pointer");
    }
    // zig's clang driver turns -O3 into -O2 for the compiler proper (zig's ReleaseFast): the -O3 after it
    // reaches clang's own options. GCC goes without (it has no -Xclang and compiles at -O3 already).
    if ale.get_compiler().is_like_clang() {
        ale.flag("-Xclang").flag("-O3");
    }
    ale
}

fn fail(message: &str) -> ! {
    eprintln!("torchwm build error: {message}");
    panic!("torchwm build error: {message}");
}

/// Tells cargo what the build reads: the environment, and every file of ours that goes into it.
fn declare_inputs(manifest_dir: &Path) -> Result<(), String> {
    for var in ale_source::ENV_VARS.iter().chain(&[
        "CXX",
        "CXXFLAGS",
        "TORCHWM_SANITIZE",
        "TORCHWM_CHECK_ONLY",
        wheel_cxx::ENV_VAR,
    ]) {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let mut files = vec![manifest_dir.join("build.rs"), manifest_dir.join("pyproject.toml")];
    for (dir, extensions) in [("build", &["rs"][..]), ("src/ffi", &["h", "hpp", "cpp", "inc"][..])] {
        list_files(&manifest_dir.join(dir), extensions, &mut files)
            .map_err(|e| format!("cannot list {}: {e}", manifest_dir.join(dir).display()))?;
    }
    for file in files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    Ok(())
}

fn list_files(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            list_files(&path, extensions, out)?;
        } else if extensions.contains(&path.extension().and_then(|e| e.to_str()).unwrap_or_default()) {
            out.push(path);
        }
    }
    Ok(())
}

/// Writes `version.hpp`, the patched copies and the unity units into `generated`; returns the units.
fn generate_sources(generated: &Path, ale_src: &Path, release: &AleRelease) -> Result<[PathBuf; 2], String> {
    ale_units::write_version_header(generated, release)?;
    let sources = ale_units::ale_sources(ale_src)?;
    let copies = ale_units::write_patched_copies(generated, ale_src)?;
    threaded_dispatch::write(generated, ale_src)?;
    ale_units::write_unity_sources(generated, ale_src, &sources, &copies)
}

/// Whether `TORCHWM_CHECK_ONLY` asks for a build that compiles no C++ ("1"; unset or "0": a full build).
fn check_only() -> Result<bool, String> {
    match env::var("TORCHWM_CHECK_ONLY").as_deref() {
        Err(_) | Ok("" | "0") => Ok(false),
        Ok("1") => Ok(true),
        Ok(other) => Err(format!("TORCHWM_CHECK_ONLY is {other:?}; it takes 1 (compile no C++) or 0")),
    }
}

/// `TORCHWM_SANITIZE` as compiler flags: `-fsanitize=...` first, empty when unset.
fn sanitize_flags() -> Result<Vec<String>, String> {
    let requested = env::var("TORCHWM_SANITIZE").unwrap_or_default();
    let names: Vec<&str> = requested.split(',').map(str::trim).filter(|name| !name.is_empty()).collect();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(unknown) = names.iter().find(|name| !SANITIZERS.contains(name)) {
        return Err(format!("TORCHWM_SANITIZE names {unknown:?}; it takes a comma-separated list of {SANITIZERS:?}"));
    }
    // Frame pointers and line tables make the reports' stacks readable.
    Ok(vec![format!("-fsanitize={}", names.join(",")), "-fno-omit-frame-pointer".into(), "-g".into()])
}

/// The runtime library of each sanitizer `TORCHWM_SANITIZE` names (already validated).
fn sanitizer_runtimes() -> Vec<&'static str> {
    let requested = env::var("TORCHWM_SANITIZE").unwrap_or_default();
    let runtimes = [("address", "asan"), ("undefined", "ubsan")];
    runtimes.iter().filter(|(name, _)| requested.split(',').any(|n| n.trim() == *name)).map(|r| r.1).collect()
}

/// The settings the shim and ALE share: they must agree on ALE's headers (the patched copies in
/// `generated` come first) and on everything that changes its types' layout. `system_headers`: ALE's
/// headers are system headers (no warnings from them), for the shim.
fn cpp_build(
    generated: &Path,
    ale_src: &Path,
    sanitize: &[String],
    wheel_cxx: Option<&WheelCxx>,
    system_headers: bool,
) -> cc::Build {
    let mut build = cc::Build::new();
    if let Some(wheel_cxx) = wheel_cxx {
        // The static libstdc++ goes in by path (main); cc would name the shared one.
        build.compiler(&wheel_cxx.compiler).cpp_link_stdlib(None);
    }
    build
        .cpp(true)
        .std("c++17")
        // ALE's own release build uses -O3; the emulator is the hot path, so debug builds use it too.
        .opt_level(3)
        .debug(false)
        .pic(true)
        // As ALE's release build: assertions off (one asserts on negative seeds, which ale_py passes through).
        .define("NDEBUG", None);
    // ALE's Windows code tests `WIN32`, which its CMake build defines for MSVC; GCC for Windows (MinGW)
    // predefines it only in the GNU dialects, not under the strict -std=c++17. The unity units put the
    // file that includes <windows.h> before the emulator's: lean, it defines no macros named like the
    // emulator's variables (dlgs.h's `grp1`) and no `min`/`max`.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("windows") {
        build.define("WIN32", None).define("WIN32_LEAN_AND_MEAN", None).define("NOMINMAX", None);
    }
    let zlib = env::var_os("DEP_Z_INCLUDE").map(PathBuf::from);
    for dir in [generated, ale_src].into_iter().chain(zlib.as_deref()) {
        if system_headers {
            build.flag("-isystem").flag(dir);
        } else {
            build.include(dir);
        }
    }
    for flag in sanitize {
        build.flag(flag);
    }
    build
}

/// Compiles ALE into `libtorchwm_ale.a`, unless the library there was built from the same inputs
/// (compiler, flags, ALE's source, the generated files and our C++ its copies include, `edits`), or
/// the cache directory holds one built from them: ALE takes a minute to compile, and clippy, cargo doc,
/// cargo test and maturin each build it in their own `OUT_DIR`. Paths under `OUT_DIR` do not count.
fn compile_ale(
    build: &cc::Build,
    out_dir: &Path,
    ale_src: &Path,
    generated: &Path,
    edits: &[PathBuf],
) -> Result<(), String> {
    let compiler = build.try_get_compiler().map_err(|e| format!("no C++ compiler: {e}"))?;
    let mut inputs = format!("{:?} {:?}\n", compiler.path(), compiler.args());
    for dir in [ale_src, generated].into_iter().chain(edits.iter().map(PathBuf::as_path)) {
        inputs.push_str(&tree_digest(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?);
    }
    let inputs = without_build_dirs(&inputs);
    // What the fingerprint hashes, kept beside the library for whoever wonders why ALE was rebuilt.
    let _ = fs::write(out_dir.join("torchwm_ale.inputs"), &inputs);
    let fingerprint: String = Sha256::digest(inputs.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    let (library, stamp) = (out_dir.join("libtorchwm_ale.a"), out_dir.join("torchwm_ale.fingerprint"));
    let shared = ale_source::cache_dir().ok().map(|dir| dir.join(format!("libtorchwm_ale-{fingerprint}.a")));
    let current = library.is_file() && fs::read_to_string(&stamp).is_ok_and(|saved| saved == fingerprint);
    if !current {
        // No stamp while compiling: an interrupted build must not leave a library that looks current.
        let _ = fs::remove_file(&stamp);
        match shared.as_deref().filter(|cached| cached.is_file()) {
            Some(cached) => {
                fs::copy(cached, &library).map_err(|e| format!("cannot copy {}: {e}", cached.display()))?;
            }
            None => {
                // try_compile also tells cargo to link the library.
                build.try_compile("torchwm_ale").map_err(|e| format!("compiling ALE failed: {e}"))?;
                if let Some(cached) = &shared {
                    store_atomically(&library, cached);
                }
                return fs::write(&stamp, &fingerprint).map_err(|e| format!("cannot write {}: {e}", stamp.display()));
            }
        }
        fs::write(&stamp, &fingerprint).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    }
    println!("cargo:rustc-link-search=native={}", out_dir.display());
    println!("cargo:rustc-link-lib=static=torchwm_ale");
    Ok(())
}

/// `text` with every path into a cargo build directory (`.../build/<crate>-<hash>/out...`, ours and
/// libz-sys's) cut down to `<crate>/out...`: the same inputs then have the same fingerprint in every
/// profile's target directory.
fn without_build_dirs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("/build/") {
        let after = &rest[at + "/build/".len()..];
        let Some(out_at) = after.find("/out") else { break };
        let crate_dir = &after[..out_at];
        if crate_dir.contains(['/', '"', ' ', '\n']) {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            continue;
        }
        let path_start = rest[..at].rfind(['"', ' ', '\n']).map_or(0, |i| i + 1);
        out.push_str(&rest[..path_start]);
        out.push_str(crate_dir.rsplit_once('-').map_or(crate_dir, |(name, _)| name));
        rest = &after[out_at..];
    }
    out.push_str(rest);
    out
}

/// Copies `library` into the cache as `cached`, through a temporary name so that a concurrent build
/// never reads half a file; a failure only means the next build compiles again.
fn store_atomically(library: &Path, cached: &Path) {
    let partial = cached.with_extension(format!("partial-{}", std::process::id()));
    if fs::copy(library, &partial).is_ok() && fs::rename(&partial, cached).is_err() {
        let _ = fs::remove_file(&partial);
    }
}

/// One line per file under `dir` (sorted): its path and sha256 (of text without build directories).
fn tree_digest(dir: &Path) -> std::io::Result<String> {
    let mut all = Vec::new();
    collect_all_files(dir, &mut all)?;
    all.sort();
    let mut digest = String::new();
    for file in all {
        // Text is hashed without build directories: the unity units include ALE's files by path.
        let bytes = fs::read(&file)?;
        let sha = match String::from_utf8(bytes) {
            Ok(text) => Sha256::digest(without_build_dirs(&text).as_bytes()),
            Err(binary) => Sha256::digest(binary.as_bytes()),
        };
        let sha: String = sha.iter().map(|b| format!("{b:02x}")).collect();
        digest.push_str(&format!("{} {sha}\n", file.display()));
    }
    Ok(digest)
}

fn collect_all_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_all_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}
