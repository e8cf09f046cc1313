#!/usr/bin/env bash
# Written by `dun init --ci`. The dun workflows run this script after installing dun and before `dun check` or
# `dun loop`: install here what your checks need (the project, its test tools, coverage). The loop jobs run the
# copy on the default branch, never one the agent committed to its branch.
set -euo pipefail
# Examples; keep the lines your project needs:
# python -m pip install -e '.[test]'
# python -m pip install -r requirements-dev.txt
# npm ci
# go mod download
echo "dun-setup.sh: nothing to install (edit .github/dun-setup.sh)"
