# shellcheck shell=bash
# .ci/run sources every .ci/services/*.sh; the PostgreSQL for the store tests is started by
# .ci/postgres.sh (kept there so it can also be sourced or run by hand).
# shellcheck source=../postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/../postgres.sh"
