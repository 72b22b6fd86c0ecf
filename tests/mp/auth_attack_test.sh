#!/usr/bin/env bash
# Authenticated connections under attack (tests/mp/auth_attack.cc): 4 ranks over tcp
# under weftrun; an attacker process sends garbage, a truncated hello, a replayed
# handshake, a forged proof (wrong secret), a store client with the wrong secret, the
# old unauthenticated data handshake and a silent client to the store and to rank 0's
# data port. Passes when every rank's collectives are correct, the attacker saw every
# connection rejected, and the store and rank 0 logged each rejection with its reason.
# Usage: auth_attack_test.sh WEFTRUN AUTH_ATTACK
set -u
WEFTRUN=$1
PROG=$2
OUT=$(mktemp /tmp/auth_attack.XXXXXX)
trap 'rm -f "$OUT"' EXIT

fail() { echo "FAIL: $*" >&2; echo "---- output ----" >&2; cat "$OUT" >&2; exit 1; }

WEFT_TRANSPORT=tcp WEFT_TIMEOUT=60 timeout 150 "$WEFTRUN" -n 4 --timeout 120 --grace 5 -- "$PROG" \
  >"$OUT" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "weftrun exited $rc"

expect() {  # expect <count> <extended regex> <what>
  local n
  n=$(grep -cE "$2" "$OUT")
  [ "$n" -ge "$1" ] || fail "expected at least $1 line(s) for $3 (/$2/), found $n"
}
expect 4 'auth_attack: ok' "every rank's collectives"
expect 1 'attack: all rejected' "the attacker's verdict"
expect 1 'attack: store client with the wrong secret refused' "the wrong-secret store client"
# The store (inside weftrun): garbage and a request without handshake (twice: before and
# during the collectives), replays and forged proofs, a hello for a data port, a truncated
# hello, the silent client.
expect 4 'store .*rejected an unauthenticated connection: not a weft authentication frame' "store garbage"
expect 4 'store .*rejected an unauthenticated connection: wrong proof' "store replay/forgery"
expect 2 'store .*data connection offered to a store port' "store wrong role"
expect 2 'store .*ended before authenticating' "store truncated hello"
expect 1 'store .*no complete handshake within' "store silent client"
# Rank 0's data listener.
expect 2 '\[0\].*rank 0: rejected a connection from .*not authenticated: not a weft authentication frame' "data garbage and the unauthenticated handshake"
expect 2 '\[0\].*rank 0: rejected a connection from .*wrong proof' "data replay and forgery"
expect 1 '\[0\].*rank 0: a connection from .* closed before its handshake' "data truncated hello"
expect 1 '\[0\].*rank 0: (closed an unfinished connection|rejected a connection from .*no complete handshake)' "data silent client"
echo "auth_attack: $(grep -c '^.*attack: .*rejected (closed' "$OUT") hostile connections rejected, job correct"
