#!/usr/bin/env bash
# Builds the user guide and API reference (mkdocs.yml) with warnings as errors, into site/ (or $1).
# Installs the `docs` extra's packages (pyproject.toml) into $DOCS_VENV (default .venv-docs); the API
# pages read the docstrings from python/ without importing torchwm, so nothing is compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${DOCS_VENV:-.venv-docs}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
mapfile -t requirements < <("$venv/bin/python" -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["docs"]))')
"$venv/bin/python" -m pip install --quiet "${requirements[@]}"
NO_MKDOCS_2_WARNING=1 "$venv/bin/mkdocs" build --strict --site-dir "${1:-site}"
