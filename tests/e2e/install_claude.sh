#!/usr/bin/env bash
# Install the pinned Claude Code CLI for the end-to-end tests into tests/e2e/.cache/claude-<version>/.
#
# Idempotent: does nothing when the binary is already there and answers --version.
# Exits 0 with a message when npm is missing, so that the e2e tests skip instead of failing.
# Uses the machine's npm with its own configured registry.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
# the pinned version lives in dun/agents/versions.py (run as a script: any python, no dun needed)
PINNED="$("${PYTHON:-python3}" -c 'import json,sys; print(json.loads(sys.stdin.read())["claude"]["version"])' \
    < <("${PYTHON:-python3}" "$HERE/../../dun/agents/versions.py") 2>/dev/null || true)"
VERSION="${CLAUDE_CODE_VERSION:-${PINNED:-2.1.197}}"
DEST="${CLAUDE_CODE_DIR:-$HERE/.cache/claude-$VERSION}"
BIN="$DEST/node_modules/.bin/claude"

if [ -x "$BIN" ] && out="$("$BIN" --version 2>/dev/null)"; then
    echo "install_claude: claude $VERSION already installed at $BIN ($out)"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install_claude: npm is missing; skipping the install (the e2e tests will skip)"
    exit 0
fi

mkdir -p "$DEST"
echo "install_claude: installing @anthropic-ai/claude-code@$VERSION into $DEST (about 235 MB)"
npm install --prefix "$DEST" --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$VERSION"

if ! out="$("$BIN" --version 2>&1)"; then
    echo "install_claude: installed, but '$BIN --version' failed: $out" >&2
    exit 1
fi
echo "install_claude: installed claude $out at $BIN"
