#!/usr/bin/env bash
# Install the JavaScript test runners the fixture projects of tests/checks/test_js_projects.py run under: vitest,
# jest, mocha, ava, tape and typescript, at the versions pinned in tests/checks/projects/js-runners.json, into
# tests/e2e/.cache/js-runners-<digest of that file>/node_modules (the tests link each fixture's node_modules there).
#
# Idempotent: nothing is fetched when that directory is complete. Exits 0 with a message when node or npm is
# missing, so that those tests skip (with the same message) instead of failing.
# Uses the machine's npm with its own configured registry.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
SPEC="$HERE/../checks/projects/js-runners.json"
DIGEST="$(sha256sum "$SPEC" | cut -c1-12)"
DEST="${DUN_E2E_CACHE:-$HERE/.cache}/js-runners-$DIGEST"

if [ -f "$DEST/.complete" ]; then
    echo "install_js_runners: already installed at $DEST"
    exit 0
fi
for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "install_js_runners: $tool is missing; skipping (the JavaScript fixture tests will skip)"
        exit 0
    fi
done

mkdir -p "$DEST"
cp "$SPEC" "$DEST/package.json"
started=$SECONDS
echo "install_js_runners: installing $(tr -d '\n' < "$SPEC" | grep -o '"devDependencies".*' | tr -s ' ') into $DEST"
if ! (cd "$DEST" && npm install --no-audit --no-fund --loglevel=error --no-package-lock); then
    # no registry (offline), a full disk: the fixture tests skip, saying so, rather than failing the whole suite
    echo "install_js_runners: npm install failed; the JavaScript fixture tests will skip" >&2
    exit 0
fi
touch "$DEST/.complete"
echo "install_js_runners: done in $((SECONDS - started))s"
