#!/usr/bin/env bash
# Throwaway PostgreSQL cluster on loopback for the store conformance suite (Debian; root in CI).
#
#   eval "$(bash .ci/postgres.sh start)"   # installs PostgreSQL if missing, starts a cluster,
#                                          # exports BERTH_TEST_POSTGRES_URL and _DIR
#   trap 'bash .ci/postgres.sh stop' EXIT  # the consumer stops it (and deletes its files)
#   bash .ci/postgres.sh stop [DIR]        # stops the cluster in DIR (default: $BERTH_TEST_POSTGRES_DIR)
#
# Only `export` lines go to stdout; progress and errors go to stderr. Idempotent: `start` with
# a live cluster in $BERTH_TEST_POSTGRES_DIR re-prints its exports instead of starting another;
# `stop` of a stopped or missing cluster succeeds.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }

# Runs a command as the cluster owner: `postgres` when we are root (initdb refuses root).
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

find_bin() {
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
        echo "$d"
    fi
}

install_postgres() {
    if [ -n "$(find_bin)" ] && id postgres >/dev/null 2>&1; then
        return
    fi
    if [ "$(id -u)" -ne 0 ]; then
        log "PostgreSQL is not installed and we are not root; run: apt-get install -y postgresql"
        exit 2
    fi
    log "installing PostgreSQL from Debian packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    # The package's own cluster may fail to start without an init system; we do not use it.
    apt-get install -y -qq postgresql >&2 || { [ -n "$(find_bin)" ] || exit 2; }
    if [ -z "$(find_bin)" ]; then
        log "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin after install"
        exit 2
    fi
}

port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

is_running() {
    local dir=$1 bin
    bin=$(find_bin)
    [ -n "$bin" ] && [ -f "$dir/data/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

start() {
    if [ -n "${BERTH_TEST_POSTGRES_DIR:-}" ] && [ -f "${BERTH_TEST_POSTGRES_DIR}/env" ] \
        && is_running "$BERTH_TEST_POSTGRES_DIR"; then
        log "cluster in $BERTH_TEST_POSTGRES_DIR is running"
        cat "$BERTH_TEST_POSTGRES_DIR/env"
        return
    fi
    install_postgres
    local bin dir pw port started=""
    bin=$(find_bin)
    dir=$(mktemp -d "${TMPDIR:-/tmp}/berth-pg.XXXXXX")
    chmod 0755 "$dir"
    pw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
    printf '%s\n' "$pw" >"$dir/pwfile"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R postgres: "$dir"
    fi
    chmod 0600 "$dir/pwfile"
    as_owner "$bin/initdb" -D "$dir/data" -U berth --pwfile="$dir/pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 2; }
    rm -f "$dir/pwfile"
    for _ in $(seq 1 20); do
        port=$((20000 + RANDOM % 30000))
        port_free "$port" || continue
        if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" start >&2; then
            started=1
            break
        fi
    done
    if [ -z "$started" ]; then
        log "cannot start PostgreSQL; server log:"
        cat "$dir/server.log" >&2 || true
        exit 2
    fi
    as_owner "$bin/createdb" -h "$dir" -p "$port" -U berth berth_test
    {
        echo "export BERTH_TEST_POSTGRES_URL='postgres://berth:${pw}@127.0.0.1:${port}/berth_test'"
        echo "export BERTH_TEST_POSTGRES_DIR='${dir}'"
    } >"$dir/env"
    chmod 0644 "$dir/env"
    log "PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port, files in $dir; stop with: bash .ci/postgres.sh stop"
    cat "$dir/env"
}

stop() {
    local dir=${1:-${BERTH_TEST_POSTGRES_DIR:-}}
    if [ -z "$dir" ]; then
        log "no cluster to stop (BERTH_TEST_POSTGRES_DIR unset)"
        return
    fi
    case "$dir" in
        "${TMPDIR:-/tmp}"/berth-pg.*) ;;
        *) log "refusing to remove $dir: not a directory this script made"; exit 2 ;;
    esac
    if is_running "$dir"; then
        as_owner "$(find_bin)/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    fi
    rm -rf "$dir"
    log "stopped and removed $dir"
}

case "${1:-start}" in
    start) start ;;
    stop) stop "${2:-}" ;;
    *) log "usage: $0 [start|stop [DIR]]"; exit 2 ;;
esac
