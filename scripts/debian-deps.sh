#!/usr/bin/env bash
# Install the Debian packages some tests drive for real, when they are missing and we may (root with apt-get).
# Never fails the build: without them, the tests that need them skip and say why.
set -u
need=""
command -v bwrap >/dev/null 2>&1 || need="$need bubblewrap"
command -v chromium >/dev/null 2>&1 || need="$need chromium"
command -v systemd-analyze >/dev/null 2>&1 || need="$need systemd"
command -v go >/dev/null 2>&1 || need="$need golang-go"
command -v redis-server >/dev/null 2>&1 || need="$need redis-server"
[ -n "$need" ] || { echo "debian-deps: all present"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "debian-deps: missing$need (not root or no apt-get); their tests will skip"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 \
  && echo "debian-deps: installed$need" || echo "debian-deps: could not install$need; their tests will skip"
exit 0
