#!/bin/sh
# Runs a command with one environment setting on one rank only, for tests where ranks
# differ in their own settings (weftrun gives every rank the same environment).
# Usage: rank_env.sh RANK NAME=VALUE COMMAND [ARGS...]   (RANK is matched to WEFT_RANK)
rank=$1
setting=$2
shift 2
if [ "${WEFT_RANK:-}" = "$rank" ]; then
  export "${setting?}"
fi
exec "$@"
