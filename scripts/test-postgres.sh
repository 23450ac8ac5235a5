# A real PostgreSQL with pgvector for the tests (decision 0035). Sourced by scripts/run.sh, which
# calls `test_postgres_up` before the tests and `test_postgres_down` when they end.
#
# On a fresh Debian 12 machine, with no step before `npm test`:
#  1. installs PostgreSQL 15 from Debian's packages and builds pgvector from Debian trixie's source
#     package (bookworm ships none; ../shared/ENVIRONMENT.md) — once; every step already done is
#     skipped, so a machine that has both pays nothing here;
#  2. initialises a throwaway cluster in .tools/pg/data (git-ignored, owned by `postgres`: initdb
#     refuses root);
#  3. starts it on 127.0.0.1 (port 54329, or the next free one; socket in /tmp), or reuses the one
#     a concurrent run in this checkout started or a killed run left behind;
#  4. gives the run a clean database `engram_test` with the `vector` extension and exports
#     ENGRAM_TEST_DATABASE_URL. Each test makes its own schema in it, so tests run in parallel.
# The last run using the server stops it (each run holds a lease file in .tools/pg/runs/).
#
# Nothing is skipped silently: when a step fails, ENGRAM_TEST_POSTGRES_ERROR says which and why,
# and every PostgreSQL test fails with that text. To run without PostgreSQL, say so:
# ENGRAM_SKIP_POSTGRES=1 (each PostgreSQL suite then reports itself skipped). To test against a
# server of your own instead, set ENGRAM_TEST_DATABASE_URL (its database needs `vector` available).

PG_MAJOR=15
pg_bin="/usr/lib/postgresql/$PG_MAJOR/bin"
pg_root="$root/.tools/pg"
pg_data="$pg_root/data"
pg_log="$pg_root/server.log"
pg_lock="$pg_root/lock"
pg_db=engram_test
pg_lease=""
pg_lock_fd=""

pg_fail() { # $* = why; the tests fail with it
  export ENGRAM_TEST_POSTGRES_ERROR="$*"
  log "PostgreSQL for the tests is NOT available: $*"
  log "The PostgreSQL tests will fail. Set ENGRAM_SKIP_POSTGRES=1 to skip them on purpose, or ENGRAM_TEST_DATABASE_URL to use a server of your own."
  return 1
}

as_root() { # runs "$@" as root, or fails
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo "$@"; else return 1; fi
}

as_pg() { # runs "$@" as the cluster's owner: `postgres` when we are root, else ourselves
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_vector_installed() { [ -f "/usr/share/postgresql/$PG_MAJOR/extension/vector.control" ] && [ -f "/usr/lib/postgresql/$PG_MAJOR/lib/vector.so" ]; }

# Step 1: PostgreSQL and pgvector, installed as root from Debian's packages. Output goes to
# .tools/pg/install.log; its tail is shown when something fails.
pg_install() {
  if [ -x "$pg_bin/postgres" ] && [ -x "$pg_bin/pg_config" ] && pg_vector_installed; then return 0; fi
  command -v apt-get >/dev/null 2>&1 || { pg_fail "PostgreSQL $PG_MAJOR with pgvector is not installed, and this machine has no apt-get to install it (engram's tests install it on Debian 12)."; return 1; }
  as_root true || { pg_fail "PostgreSQL $PG_MAJOR with pgvector is not installed, and installing it needs root (or passwordless sudo). Install postgresql-$PG_MAJOR and pgvector as ../shared/ENVIRONMENT.md says."; return 1; }
  local started=$SECONDS install_log="$pg_root/install.log"
  mkdir -p "$pg_root"
  : >"$install_log"
  log "installing PostgreSQL $PG_MAJOR + pgvector for the tests (once; log: .tools/pg/install.log)…"
  if [ ! -x "$pg_bin/postgres" ] || [ ! -x "$pg_bin/pg_config" ] || [ ! -f "/usr/include/postgresql/$PG_MAJOR/server/postgres.h" ]; then
    # The package would create and start a cluster of its own on port 5432; the tests use theirs.
    as_root mkdir -p /etc/postgresql-common/createcluster.d
    printf '# engram tests (scripts/test-postgres.sh): no default cluster\ncreate_main_cluster = false\n' \
      | as_root tee /etc/postgresql-common/createcluster.d/engram-tests.conf >/dev/null
    if ! { as_root apt-get update && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" build-essential; } >>"$install_log" 2>&1; then
      tail -n 15 "$install_log" >&2
      pg_fail "apt-get could not install postgresql-$PG_MAJOR and postgresql-server-dev-$PG_MAJOR (no network or no Debian repository?); see .tools/pg/install.log."
      return 1
    fi
  fi
  if ! pg_vector_installed; then pg_build_vector "$install_log" || return 1; fi
  log "PostgreSQL $PG_MAJOR + pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "/usr/share/postgresql/$PG_MAJOR/extension/vector.control") installed in $((SECONDS - started)) s"
}

# pgvector from Debian trixie's source package, built against the installed server. apt reads the
# trixie source list from a folder of ours, so the machine's own apt sources stay as they were.
pg_build_vector() { # $1 = install log
  local apt_dir="$pg_root/apt" src="$pg_root/src"
  mkdir -p "$apt_dir/lists/partial" "$src"
  printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main\n' >"$apt_dir/trixie-src.list"
  local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/trixie-src.list" -o Dir::Etc::SourceParts=- -o "Dir::State::Lists=$apt_dir/lists" -o APT::Sandbox::User=root)
  if ! ls "$src"/pgvector_*.orig.tar.* >/dev/null 2>&1; then
    if ! { as_root apt-get "${apt_opts[@]}" update && (cd "$src" && as_root apt-get "${apt_opts[@]}" source --download-only pgvector); } >>"$1" 2>&1; then
      tail -n 15 "$1" >&2
      pg_fail "could not download pgvector's source package from Debian trixie (no network?); see .tools/pg/install.log."
      return 1
    fi
  fi
  local tarball
  tarball="$(ls "$src"/pgvector_*.orig.tar.* | head -n 1)"
  rm -rf "$src/build" && mkdir -p "$src/build"
  # OPTFLAGS="" as Debian builds it: no -march=native, so the library runs on any x86-64.
  if ! { tar -xf "$tarball" -C "$src/build" --strip-components=1 \
      && make -C "$src/build" -j2 PG_CONFIG="$pg_bin/pg_config" OPTFLAGS="" with_llvm=no \
      && as_root make -C "$src/build" PG_CONFIG="$pg_bin/pg_config" OPTFLAGS="" with_llvm=no install; } >>"$1" 2>&1; then
    tail -n 15 "$1" >&2
    pg_fail "could not build pgvector from $tarball; see .tools/pg/install.log."
    return 1
  fi
}

pg_port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The pid of our cluster's postmaster when it is really running; a pid file left by a server that
# died (and whose pid may since belong to another program) is removed.
pg_running_pid() {
  local pid_file="$pg_data/postmaster.pid" pid
  [ -f "$pid_file" ] || return 1
  pid="$(head -n 1 "$pid_file")"
  if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "postgres.*$pg_data"; then
    echo "$pid"
    return 0
  fi
  log "removing the pid file of a PostgreSQL that is no longer running (a killed run)"
  rm -f "$pid_file"
  return 1
}

# Whether process $1 runs (a killed one can linger as a zombie until its parent reaps it).
pid_alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# Leases of runs whose process is gone are dropped; prints how many live ones are left.
pg_live_leases() {
  local lease count=0
  for lease in "$pg_root"/runs/*; do
    [ -e "$lease" ] || continue
    if pid_alive "$(basename "$lease")"; then count=$((count + 1)); else rm -f "$lease"; fi
  done
  echo "$count"
}

pg_psql() { # $1 = database, rest = psql arguments
  local db="$1"
  shift
  "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres -d "$db" "$@"
}

# The cluster is owned by `postgres`, which must reach its folder. A checkout inside a folder only
# root may enter (`git clone . "$(mktemp -d)/fresh"` as root: mktemp makes it 0700) cannot hold it:
# then the data and the server log go to /var/tmp/engram-test-pg/<checkout's hash>/, owned by
# `postgres`; leases and the lock stay in .tools/pg.
pg_place_data() {
  [ "$(id -u)" = 0 ] || return 0
  runuser -u postgres -- test -x "$pg_root" 2>/dev/null && return 0
  local outside
  outside="/var/tmp/engram-test-pg/$(printf '%s' "$root" | sha256sum | cut -c1-16)"
  mkdir -p "$outside"
  chown postgres:postgres "$outside"
  chmod 700 "$outside"
  pg_data="$outside/data"
  pg_log="$outside/server.log"
}

# Steps 2-4. Under .tools/pg/lock, so concurrent runs in one checkout start one server.
pg_start() {
  local started=$SECONDS
  mkdir -p "$pg_root/runs"
  pg_place_data
  exec {pg_lock_fd}>"$pg_lock"
  flock "$pg_lock_fd"
  local others
  others="$(pg_live_leases)"
  pg_lease="$pg_root/runs/$$"
  : >"$pg_lease"

  if [ ! -f "$pg_data/PG_VERSION" ]; then
    rm -rf "$pg_data"
    mkdir -p "$pg_data"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$pg_data"
    chmod 700 "$pg_data"
    # C collation: text sorts by bytes, as SQLite's does, so both backends order alike.
    if ! as_pg "$pg_bin/initdb" -D "$pg_data" -A trust -U postgres -E UTF8 --no-locale --no-sync >"$pg_root/initdb.log" 2>&1; then
      tail -n 15 "$pg_root/initdb.log" >&2
      pg_fail "initdb could not create the test cluster in $pg_data; see .tools/pg/initdb.log."
      return 1
    fi
  fi

  local pid
  if pid="$(pg_running_pid)"; then
    pg_port="$(sed -n 4p "$pg_data/postmaster.pid")"
    [ "$others" = 0 ] && log "reusing the PostgreSQL a killed run left on port $pg_port"
  else
    pg_port="${ENGRAM_TEST_PG_PORT:-54329}"
    local tries=0
    while pg_port_in_use "$pg_port"; do
      tries=$((tries + 1))
      [ "$tries" -lt 20 ] || { pg_fail "ports ${ENGRAM_TEST_PG_PORT:-54329}-$pg_port are all in use; set ENGRAM_TEST_PG_PORT to a free port."; return 1; }
      pg_port=$((pg_port + 1))
    done
    # The socket's lock file of a server that died (killed, or a zombie not yet reaped) makes a new
    # one refuse to start; the port is free, so no live server owns it.
    local socket_lock="/tmp/.s.PGSQL.$pg_port.lock" owner
    if [ -f "$socket_lock" ]; then
      owner="$(head -n 1 "$socket_lock")"
      if ! { pid_alive "$owner" && tr '\0' ' ' <"/proc/$owner/cmdline" 2>/dev/null | grep -q postgres; }; then
        rm -f "$socket_lock" "/tmp/.s.PGSQL.$pg_port"
      fi
    fi
    touch "$pg_log"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$pg_log"
    # A throwaway test server: durability is traded for speed (a crash loses only test data).
    if ! as_pg "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_log" -w -t 60 \
        -o "-p $pg_port -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null; then
      tail -n 15 "$pg_log" >&2
      pg_fail "the test PostgreSQL did not start on port $pg_port; see $pg_log."
      return 1
    fi
  fi

  # A clean database per run, unless another run is using it now. Test schemas a killed run left
  # behind go with it.
  if [ "$others" = 0 ]; then
    if ! pg_psql postgres -c "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" -c "CREATE DATABASE $pg_db" >/dev/null \
        || ! pg_psql "$pg_db" -c 'CREATE EXTENSION IF NOT EXISTS vector' >/dev/null; then
      pg_fail "could not create the database $pg_db with the vector extension on port $pg_port; see $pg_log."
      return 1
    fi
  fi
  flock -u "$pg_lock_fd"
  export ENGRAM_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/$pg_db"
  log "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') with pgvector for the tests at $ENGRAM_TEST_DATABASE_URL (ready in $((SECONDS - started)) s)"
}

# Called by run.sh before the tests. Never fails the script: a missing server makes the
# PostgreSQL tests fail (with ENGRAM_TEST_POSTGRES_ERROR), the others still run.
test_postgres_up() {
  if [ "${ENGRAM_SKIP_POSTGRES:-}" = 1 ]; then
    log "ENGRAM_SKIP_POSTGRES=1: the PostgreSQL tests are SKIPPED (each suite says so)"
    return 0
  fi
  if [ -n "${ENGRAM_TEST_DATABASE_URL:-}" ]; then
    log "PostgreSQL tests use ENGRAM_TEST_DATABASE_URL as given"
    return 0
  fi
  if [ "$(uname -s)" != Linux ]; then
    pg_fail "engram's tests start PostgreSQL themselves on Debian/Ubuntu Linux only; on $(uname -s), set ENGRAM_TEST_DATABASE_URL to a PostgreSQL $PG_MAJOR+ with pgvector."
    return 0
  fi
  pg_install && pg_start || true
  if [ -n "$pg_lock_fd" ]; then flock -u "$pg_lock_fd" 2>/dev/null || true; fi
  return 0
}

# Called on exit: drops this run's lease; the last run stops the server.
test_postgres_down() {
  [ -n "$pg_lease" ] || return 0
  exec {pg_lock_fd}>"$pg_lock"
  flock "$pg_lock_fd"
  rm -f "$pg_lease"
  pg_lease=""
  if [ "$(pg_live_leases)" = 0 ] && pg_running_pid >/dev/null; then
    as_pg "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w stop >/dev/null 2>&1 || log "could not stop the test PostgreSQL (pid file $pg_data/postmaster.pid)"
  fi
  flock -u "$pg_lock_fd"
}
