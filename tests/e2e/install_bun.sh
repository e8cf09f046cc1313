#!/usr/bin/env bash
# Install bun, pinned, for the bun-test fixture tests of tests/checks/test_ecosystem_leftovers.py: the npm registry's
# `bun` package and the platform package it names (@oven/bun-linux-x64 and the like), into
# tests/e2e/.cache/bun-<version>/node_modules (the tests put its .bin on PATH). Idempotent; exits 0 with a message
# when node or npm is missing or the registry cannot be reached, so that those tests skip (saying so) instead of
# failing. Uses the machine's npm with its own configured registry.
set -euo pipefail

VERSION=1.4.5
HERE="$(cd "$(dirname "$0")" && pwd)"
DEST="${DUN_E2E_CACHE:-$HERE/.cache}/bun-$VERSION"

if [ -f "$DEST/.complete" ]; then
    echo "install_bun: already installed at $DEST"
    exit 0
fi
for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "install_bun: $tool is missing; skipping (the bun fixture tests will skip)"
        exit 0
    fi
done
rm -rf "$DEST.part"
mkdir -p "$DEST.part"
printf '{"name": "dun-bun-fixture", "private": true}\n' > "$DEST.part/package.json"
# bun's own postinstall puts the platform package's binary in place of its launcher
if ! (cd "$DEST.part" && npm install --no-audit --no-fund --loglevel=error --no-package-lock "bun@$VERSION") \
        || ! "$DEST.part/node_modules/.bin/bun" --version >/dev/null 2>&1; then
    echo "install_bun: npm install bun@$VERSION failed, or its binary does not run here; the bun fixture tests will skip" >&2
    rm -rf "$DEST.part"
    exit 0
fi
rm -rf "$DEST"
mv "$DEST.part" "$DEST"
touch "$DEST/.complete"
echo "install_bun: installed bun $("$DEST/node_modules/.bin/bun" --version) at $DEST"
