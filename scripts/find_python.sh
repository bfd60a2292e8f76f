#!/usr/bin/env bash
# Prints the path of a CPython X.Y interpreter ($1, e.g. 3.10): pyenv's install of it, else pythonX.Y on
# the PATH. Fails, naming what is missing, when there is none.
set -euo pipefail
version="$1"
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
for candidate in "$root"/versions/"$version".*/bin/python"$version"; do
    if [ -x "$candidate" ]; then
        echo "$candidate"
        exit 0
    fi
done
if command -v "python$version" >/dev/null && "python$version" -c 'import sys' 2>/dev/null; then
    command -v "python$version"
    exit 0
fi
echo "no CPython $version: install it (e.g. pyenv install $version)" >&2
exit 1
