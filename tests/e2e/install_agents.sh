#!/usr/bin/env bash
# Install the pinned agent CLIs for the end-to-end tests into tests/e2e/.cache/<name>-<version>/.
#
#   bash tests/e2e/install_agents.sh              # every CLI pinned in dun/agents/versions.py except claude
#   bash tests/e2e/install_agents.sh codex aider  # only these
#
# Versions live in dun/agents/versions.py (run here as a script, imported by dun doctor and the tests), nowhere else.
# Idempotent: a CLI whose binary is already there and answers --version is left alone.
# npm packages go in with `npm install --prefix`; aider (PyPI) gets its own venv. A missing npm or python venv
# support prints a message and skips that CLI with exit 0, so that its tests skip instead of failing.
# Claude Code keeps its own script (install_claude.sh); naming `claude` here delegates to it.
# Uses the machine's npm and pip with their own configured registries.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
VERSIONS_PY="$HERE/../../dun/agents/versions.py"
CACHE="${DUN_E2E_CACHE:-$HERE/.cache}"
PYTHON="${PYTHON:-python3}"

if ! VERSIONS="$("$PYTHON" "$VERSIONS_PY" 2>/dev/null)"; then
    echo "install_agents: $PYTHON is missing or does not run; cannot read $VERSIONS_PY (the e2e tests will skip)"
    exit 0
fi

# field NAME KEY: one value of the pins
field() {
    "$PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]][sys.argv[3]])' "$VERSIONS" "$1" "$2"
}

if [ "$#" -gt 0 ]; then
    NAMES=("$@")
else
    mapfile -t NAMES < <("$PYTHON" -c 'import json,sys
for k in json.loads(sys.argv[1]):
    if k != "claude": print(k)' "$VERSIONS")
fi

install_one() {
    local name="$1" installer package version dest bin out started
    if [ "$name" = "claude" ]; then
        bash "$HERE/install_claude.sh"
        return 0
    fi
    installer="$(field "$name" installer)"
    package="$(field "$name" package)"
    version="$(field "$name" version)"
    dest="$CACHE/$name-$version"
    bin="$dest/$(field "$name" bin)"

    if [ -x "$bin" ] && out="$(HOME="$dest/.home" "$bin" --version </dev/null 2>&1)"; then
        echo "install_agents: $name $version already installed at $bin ($(echo "$out" | head -1))"
        return 0
    fi
    started=$SECONDS
    case "$installer" in
        npm)
            if ! command -v npm >/dev/null 2>&1; then
                echo "install_agents: npm is missing; skipping $package@$version (its e2e tests will skip)"
                return 0
            fi
            mkdir -p "$dest"
            echo "install_agents: installing $package@$version into $dest"
            npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "$package@$version"
            ;;
        pip)
            if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
                echo "install_agents: python venv/ensurepip is missing; skipping $package==$version (its tests will skip)"
                return 0
            fi
            echo "install_agents: installing $package==$version into its own venv at $dest"
            rm -rf "$dest"
            "$PYTHON" -m venv "$dest"
            "$dest/bin/pip" install --quiet --disable-pip-version-check --no-input "$package==$version"
            ;;
        *)
            echo "install_agents: unknown installer '$installer' for $name in $VERSIONS_PY" >&2
            return 1
            ;;
    esac
    # Some CLIs write config on first start: keep that out of the real HOME.
    mkdir -p "$dest/.home"
    if ! out="$(HOME="$dest/.home" "$bin" --version </dev/null 2>&1)"; then
        echo "install_agents: installed $name, but '$bin --version' failed: $out" >&2
        return 1
    fi
    echo "install_agents: installed $name $(echo "$out" | head -1) at $bin in $((SECONDS - started))s ($(du -sh "$dest" | cut -f1))"
}

status=0
for name in "${NAMES[@]}"; do
    install_one "$name" || status=1
done
exit "$status"
