# shellcheck shell=bash
# Start a throwaway PostgreSQL for the store tests and export PROFILES_TEST_POSTGRES_URL.
#
# Meant to be sourced (`. .ci/services/postgres.sh`) by .ci/run: the server then stops when that script
# exits (an EXIT trap, chained after any EXIT trap already set; a script that sets its own EXIT
# trap after sourcing this should call `_profiles_pg_stop` in it). Run directly, it starts a server, prints the export line and the stop command, and leaves
# the server running. Idempotent: if PROFILES_TEST_POSTGRES_URL already answers, nothing happens.
#
# Installs the Debian `postgresql` package only when no server binary is found. Runs the server as
# the `postgres` user when started as root (PostgreSQL refuses to run as root), with trust auth on
# 127.0.0.1 only, on a free port, with fsync off: this is a test database, speed beats durability.

_profiles_pg_log() { printf '[postgres.sh] %s\n' "$*" >&2; }

_profiles_pg_answers() {
    # true when the URL in $1 accepts connections; trusted as given when pg_isready is missing
    local url="${1/postgresql+psycopg:/postgresql:}" probe
    probe="$(command -v pg_isready 2>/dev/null || true)"
    [ -n "$probe" ] || probe="$(_profiles_pg_bindir)/pg_isready"
    if [ -x "$probe" ]; then
        "$probe" -q -d "$url" -t 3
    else
        return 0
    fi
}

_profiles_pg_bindir() {
    local dir best=""
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && best="$dir"   # glob sorts: the last is newest
    done
    if [ -z "$best" ] && command -v pg_config >/dev/null 2>&1; then
        dir="$(pg_config --bindir 2>/dev/null)"
        [ -x "$dir/initdb" ] && best="$dir"
    fi
    printf '%s' "$best"
}

_profiles_pg_as_owner() {
    # run a command as the server's owner: `postgres` when we are root, else ourselves
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

_profiles_pg_stop() {
    if [ -n "${_PROFILES_PG_DATA:-}" ] && [ -f "$_PROFILES_PG_DATA/postmaster.pid" ]; then
        _profiles_pg_as_owner "$_PROFILES_PG_BIN/pg_ctl" -D "$_PROFILES_PG_DATA" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    [ -n "${_PROFILES_PG_ROOT:-}" ] && rm -rf "$_PROFILES_PG_ROOT"
    unset _PROFILES_PG_DATA _PROFILES_PG_ROOT
    return 0
}

_profiles_pg_start() {
    if [ -n "${PROFILES_TEST_POSTGRES_URL:-}" ] && _profiles_pg_answers "$PROFILES_TEST_POSTGRES_URL"; then
        _profiles_pg_log "already running: $PROFILES_TEST_POSTGRES_URL"
        return 0
    fi

    _PROFILES_PG_BIN="$(_profiles_pg_bindir)"
    if [ -z "$_PROFILES_PG_BIN" ]; then
        _profiles_pg_log "no PostgreSQL server found; installing the Debian package"
        if [ "$(id -u)" = 0 ]; then
            DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 || return 1
        else
            sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 || return 1
        fi
        _PROFILES_PG_BIN="$(_profiles_pg_bindir)"
        [ -n "$_PROFILES_PG_BIN" ] || { _profiles_pg_log "installed, but no initdb under /usr/lib/postgresql/*/bin"; return 1; }
    fi

    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin postgres || return 1
    fi

    _PROFILES_PG_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/profiles-pg.XXXXXX")" || return 1
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$_PROFILES_PG_ROOT"
        if ! runuser -u postgres -- test -w "$_PROFILES_PG_ROOT"; then
            # a private TMPDIR (e.g. under /root) the postgres user cannot reach
            rm -rf "$_PROFILES_PG_ROOT"
            _PROFILES_PG_ROOT="$(mktemp -d /tmp/profiles-pg.XXXXXX)" || return 1
            chown postgres: "$_PROFILES_PG_ROOT"
        fi
    fi
    _PROFILES_PG_DATA="$_PROFILES_PG_ROOT/data"
    _profiles_pg_as_owner mkdir -p "$_PROFILES_PG_ROOT/socket"

    local port
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')" || return 1

    if ! _profiles_pg_as_owner "$_PROFILES_PG_BIN/initdb" -D "$_PROFILES_PG_DATA" -U postgres \
        --auth=trust --encoding=UTF8 --locale=C --no-sync >"$_PROFILES_PG_ROOT/initdb.log" 2>&1; then
        _profiles_pg_log "initdb failed:"; cat "$_PROFILES_PG_ROOT/initdb.log" >&2; _profiles_pg_stop; return 1
    fi
    if ! _profiles_pg_as_owner "$_PROFILES_PG_BIN/pg_ctl" -D "$_PROFILES_PG_DATA" -w -t 60 \
        -l "$_PROFILES_PG_ROOT/server.log" \
        -o "-h 127.0.0.1 -p $port -k $_PROFILES_PG_ROOT/socket -F -c max_connections=200 -c full_page_writes=off" \
        start >/dev/null; then
        _profiles_pg_log "the server did not start:"; cat "$_PROFILES_PG_ROOT/server.log" >&2; _profiles_pg_stop; return 1
    fi
    if ! _profiles_pg_as_owner "$_PROFILES_PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres profiles_test; then
        _profiles_pg_log "createdb failed"; _profiles_pg_stop; return 1
    fi

    export PROFILES_TEST_POSTGRES_URL="postgresql+psycopg://postgres@127.0.0.1:$port/profiles_test"
    _profiles_pg_log "started PostgreSQL $("$_PROFILES_PG_BIN/postgres" --version | awk '{print $3}') at $PROFILES_TEST_POSTGRES_URL"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    # run directly: start, tell the caller how to use and stop it, leave it running
    _profiles_pg_start || exit 1
    if [ -n "${_PROFILES_PG_DATA:-}" ]; then
        echo "export PROFILES_TEST_POSTGRES_URL=$PROFILES_TEST_POSTGRES_URL"
        echo "# stop with: runuser -u postgres -- $_PROFILES_PG_BIN/pg_ctl -D $_PROFILES_PG_DATA stop && rm -rf $_PROFILES_PG_ROOT"
    fi
else
    if _profiles_pg_start; then
        if [ -n "${_PROFILES_PG_DATA:-}" ] && ! trap -p EXIT | grep -q _profiles_pg_stop; then
            # keep whatever EXIT trap the sourcing script already has, and stop our server after it
            _profiles_pg_previous_trap="$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")"
            # shellcheck disable=SC2064
            trap "${_profiles_pg_previous_trap:+$_profiles_pg_previous_trap; }_profiles_pg_stop" EXIT
            unset _profiles_pg_previous_trap
        fi
    else
        return 1
    fi
fi
