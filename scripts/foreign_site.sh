# Sourced by scripts/aarch64_check.sh and scripts/windows_check.sh: what both do to run torchwm's wheel
# for another platform beside its dependencies' wheels for that platform, from the repository's root.
# Sets `repo` and `uv` (TORCHWM_UV, or the tools virtualenv's); the functions need the caller's
# `python_version`, `cache` and `step`.
repo=$(pwd)
uv="${TORCHWM_UV:-$repo/.venv-tools/bin/uv}"

# Sets `prepare_only`, and `wheel` (its absolute path) unless the first argument is `--prepare`.
check_arguments() {
    prepare_only=false
    if [ "${1:-}" = --prepare ]; then
        prepare_only=true
    else
        wheel=$(realpath "$1")
    fi
}

# Sets `target_options` for uv, and `site`: a folder of torchwm's runtime dependencies
# (pyproject.toml, the one place they are written) and the test runner, as wheels for `platform`, made
# once per key of the requirements and `key_extra` (what else the folder depends on).
# Usage: dependency_site PLATFORM KEY_EXTRA [EXTRA_REQUIREMENT...]
dependency_site() {
    local platform="$1" key_extra="$2"
    shift 2
    local requirements key
    mapfile -t requirements < <(python3 - "$@" <<'PY'
import sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
print(*project["dependencies"], "pytest>=7", "pytest-timeout>=2.1", *sys.argv[1:], sep="\n")
PY
    )
    key=$(printf '%s\n' "$key_extra" "${requirements[@]}" | sha256sum | cut -c1-16)
    site="$cache/site-$key"
    target_options=(--python-platform "$platform" --python-version "$python_version" --only-binary :all:)
    if [ ! -d "$site" ]; then
        step "$platform wheels of: ${requirements[*]}"
        rm -rf "$site.partial"
        "$uv" pip install --quiet --target "$site.partial" "${target_options[@]}" "${requirements[@]}"
        mv "$site.partial" "$site"
    fi
}

# Sets `ours`: torchwm's wheel alone, installed afresh into target/NAME-site for the platform.
# Usage: install_wheel NAME (after dependency_site)
install_wheel() {
    ours="$repo/target/$1-site"
    rm -rf "$ours"
    "$uv" pip install --quiet --no-deps --target "$ours" "${target_options[@]}" "$wheel"
}
