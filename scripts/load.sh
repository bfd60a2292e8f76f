#!/usr/bin/env bash
# Keeps every core busy while a command runs: the machine a CI job shares with other jobs.
#
#   bash scripts/load.sh [--per-core N] [--] COMMAND [ARGS...]
#
# Starts N CPU-bound processes per core (default 2; `nproc` cores), runs COMMAND, stops them when it
# ends (or on Ctrl-C / an error) and exits with COMMAND's exit status. Without a command it loads the
# machine until interrupted. The load runs at the default priority: it competes with the tests as
# another job's compiler or benchmark would. Example (the README's testing section):
#
#   bash scripts/load.sh bash scripts/test.sh
set -euo pipefail

per_core=2
while [[ $# -gt 0 ]]; do
    case "$1" in
    --per-core)
        per_core="$2"
        shift 2
        ;;
    --)
        shift
        break
        ;;
    *) break ;;
    esac
done
if ! [[ "$per_core" =~ ^[0-9]+$ ]] || [[ "$per_core" -lt 1 ]]; then
    echo "load.sh: --per-core needs a positive integer, got '$per_core'" >&2
    exit 2
fi

count=$((per_core * $(nproc)))
spinners=()
stop_load() {
    # Only the processes started here, by their ids.
    [[ ${#spinners[@]} -eq 0 ]] || kill "${spinners[@]}" 2>/dev/null || true
    wait "${spinners[@]}" 2>/dev/null || true
}
trap stop_load EXIT
trap 'exit 130' INT TERM

for _ in $(seq "$count"); do
    # A busy loop in the shell itself: no interpreter start-up, nothing to install, one core each.
    bash -c 'while :; do :; done' &
    spinners+=("$!")
done
echo "load.sh: $count CPU-bound processes ($per_core per core on $(nproc) cores) running" >&2

if [[ $# -eq 0 ]]; then
    echo "load.sh: no command given; loading until interrupted (Ctrl-C)" >&2
    wait
else
    status=0
    "$@" || status=$?
    exit "$status"
fi
