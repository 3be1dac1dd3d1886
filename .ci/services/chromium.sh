# shellcheck shell=bash
# Find (or install) a headless-capable Chromium for the browser tests and export PROFILES_TEST_CHROMIUM.
#
# Meant to be sourced (`source .ci/services/chromium.sh`) by .ci/run, like postgres.sh. Nothing is
# started, so there is nothing to stop and no EXIT trap. Run directly, it does the same and prints
# the export line.
#
# Idempotent: when PROFILES_TEST_CHROMIUM already names a working browser, or a `chromium` is on
# PATH, nothing is installed. Otherwise it installs Debian's `chromium` package (apt-get as root,
# else through sudo). Playwright's own browser download (`playwright install`) is never used: the
# tests launch this binary with `executable_path=os.environ["PROFILES_TEST_CHROMIUM"]`.
#
# The binary is checked by rendering a data: URL headless with the flags the tests use
# (PROFILES_TEST_CHROMIUM_ARGS, exported too); a browser that cannot start headless here fails
# now, with its own error output, rather than halfway through the test suite.
#
# Returns non-zero (so `set -e` in the sourcing script stops) with a message on stderr when no
# working Chromium can be had.

_profiles_chromium_log() { printf '[chromium.sh] %s\n' "$*" >&2; }

# Flags needed here: root needs --no-sandbox; no GPU; no QUIC and no background fetches, since
# nothing but loopback is reachable (a fetch that hangs slows or breaks page loads).
PROFILES_TEST_CHROMIUM_ARGS="--no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync"

_profiles_chromium_find() {
    # print the first Chromium binary found: $PROFILES_TEST_CHROMIUM, then PATH, then known places
    local candidate
    for candidate in "${PROFILES_TEST_CHROMIUM:-}" \
        "$(command -v chromium 2>/dev/null || true)" \
        "$(command -v chromium-browser 2>/dev/null || true)" \
        /usr/bin/chromium /usr/lib/chromium/chromium; do
        if [ -n "$candidate" ] && [ -x "$candidate" ] && [ ! -d "$candidate" ]; then
            printf '%s' "$candidate"
            return 0
        fi
    done
    return 1
}

_profiles_chromium_works() {
    # true when $1 renders a page headless; its output is shown when it does not
    local out profile status=0
    profile="$(mktemp -d "${TMPDIR:-/tmp}/profiles-chromium.XXXXXX")" || return 1
    # shellcheck disable=SC2086  # the flags are meant to split
    out="$(timeout 60 "$1" --headless $PROFILES_TEST_CHROMIUM_ARGS --user-data-dir="$profile" \
        --dump-dom 'data:text/html,<p id=ok>chromium-ok</p>' 2>&1)" || status=$?
    rm -rf "$profile"
    if [ "$status" = 0 ] && [[ "$out" == *chromium-ok* ]]; then
        return 0
    fi
    _profiles_chromium_log "$1 did not render a page headless (exit status $status); the last of its output:"
    printf '%s\n' "${out:-(none)}" | tail -n 20 >&2
    return 1
}

_profiles_chromium_install() {
    _profiles_chromium_log "no Chromium found; installing the Debian packages 'chromium' and 'fonts-liberation'"
    if [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation >&2
    elif command -v sudo >/dev/null 2>&1; then
        sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
            sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation >&2
    else
        _profiles_chromium_log "not root and no sudo: install Debian's 'chromium' package, or set PROFILES_TEST_CHROMIUM"
        return 1
    fi
}

_profiles_chromium_setup() {
    local found
    if found="$(_profiles_chromium_find)"; then
        if [ "$found" = "${PROFILES_TEST_CHROMIUM:-}" ]; then
            _profiles_chromium_log "using PROFILES_TEST_CHROMIUM=$found as given"
        else
            _profiles_chromium_log "found $found"
        fi
    else
        if ! _profiles_chromium_install; then
            _profiles_chromium_log "installing 'chromium' with apt-get failed (see above)"
            return 1
        fi
        if ! found="$(_profiles_chromium_find)"; then
            _profiles_chromium_log "installed 'chromium', but no chromium binary is on PATH or at /usr/bin/chromium"
            return 1
        fi
        _profiles_chromium_log "installed $found"
    fi
    _profiles_chromium_works "$found" || return 1
    export PROFILES_TEST_CHROMIUM="$found"
    export PROFILES_TEST_CHROMIUM_ARGS
    _profiles_chromium_log "PROFILES_TEST_CHROMIUM=$PROFILES_TEST_CHROMIUM ($("$found" --version 2>/dev/null | head -n 1))"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    _profiles_chromium_setup || exit 1
    echo "export PROFILES_TEST_CHROMIUM=$PROFILES_TEST_CHROMIUM"
    echo "export PROFILES_TEST_CHROMIUM_ARGS=\"$PROFILES_TEST_CHROMIUM_ARGS\""
else
    _profiles_chromium_setup || return 1
fi
