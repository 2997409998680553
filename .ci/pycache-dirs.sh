#!/usr/bin/env bash
# Rewrites .ci/pycache-dirs: the site-packages directories in which the test suite imported
# something. Run it in a venv installed with uv (no bytecode at install) after one test run.
set -euo pipefail
cd "$(dirname "$0")/.."
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
(cd "$site" && find . -path '*/__pycache__/*.pyc' | sed 's#^\./##; s#/\?__pycache__/.*##' | sort -u) \
  > .ci/pycache-dirs
wc -l .ci/pycache-dirs
