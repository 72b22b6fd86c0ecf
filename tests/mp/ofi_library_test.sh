#!/usr/bin/env bash
# libfabric is loaded with dlopen only when the ofi transport is asked for
# (src/transport/ofi/fabric_lib.h):
#   missing:       WEFT_TRANSPORT=ofi with WEFT_OFI_LIBRARY pointing nowhere: every rank's
#                  init fails at once, naming the library and what to do about it;
#   not_requested: the same bad WEFT_OFI_LIBRARY with WEFT_TRANSPORT=tcp: init succeeds,
#                  because nothing loads libfabric;
#   shm_ofi_missing: WEFT_TRANSPORT=shm+ofi with the bad library fails like ofi;
#   auto_no_device: the bad library with WEFT_TRANSPORT=auto on a machine without an RDMA
#                  device (skipped where there is one): init succeeds over shm+tcp and no
#                  rank even tried libfabric (its INFO line says why it would fall back).
# Usage: ofi_library_test.sh WEFTRUN INIT_ONLY CASE
set -u
WEFTRUN=$1
INIT_ONLY=$2
CASE=$3
BAD=/nonexistent/weft-test/libfabric.so.1
TMP=$(mktemp -d /tmp/ofi_library.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL [$CASE]: $*" >&2; echo "--- output ---" >&2; cat "$TMP/out" >&2; exit 1; }

case "$CASE" in
  missing|shm_ofi_missing)
    mode=ofi
    [ "$CASE" = missing ] || mode=shm+ofi
    timeout 120 "$WEFTRUN" -n 2 --keep-going --timeout 90 -x WEFT_TIMEOUT=30 -x WEFT_TRANSPORT=$mode \
      -x WEFT_OFI_LIBRARY=$BAD -- "$INIT_ONLY" >"$TMP/out" 2>&1
    rc=$?
    cat "$TMP/out"
    [ $rc -ne 0 ] || fail "init succeeded without libfabric"
    [ $rc -ne 124 ] || fail "hung until the outer timeout"
    for r in 0 1; do
      grep "^\[$r\] init_only: weftCommInitFromEnv failed" "$TMP/out" | grep -F "$BAD" \
        | grep -q "WEFT_OFI_LIBRARY" || fail "rank $r does not name the missing library"
    done
    ;;
  not_requested)
    timeout 120 "$WEFTRUN" -n 2 --timeout 90 -x WEFT_TIMEOUT=30 -x WEFT_TRANSPORT=tcp \
      -x WEFT_OFI_LIBRARY=$BAD -- "$INIT_ONLY" >"$TMP/out" 2>&1
    rc=$?
    cat "$TMP/out"
    [ $rc -eq 0 ] || fail "init over tcp failed (rc $rc): did it try to load libfabric?"
    [ "$(grep -c 'init_only: ok' "$TMP/out")" -eq 2 ] || fail "not every rank finished"
    ;;
  auto_no_device)
    if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
      echo "SKIP: this machine has RDMA devices (/sys/class/infiniband), so auto looks for a fabric"
      exit 77
    fi
    timeout 120 "$WEFTRUN" -n 2 --timeout 90 -x WEFT_TIMEOUT=30 -x WEFT_TRANSPORT=auto \
      -x WEFT_DEBUG=INFO -x WEFT_OFI_LIBRARY=$BAD -- "$INIT_ONLY" >"$TMP/out" 2>&1
    rc=$?
    cat "$TMP/out"
    [ $rc -eq 0 ] || fail "init with auto failed (rc $rc)"
    [ "$(grep -c 'init_only: ok' "$TMP/out")" -eq 2 ] || fail "not every rank finished"
    ! grep -q "no fabric for ofi" "$TMP/out" || fail "auto tried libfabric without an RDMA device"
    [ "$(grep -c 'WEFT_TRANSPORT=auto (shm+tcp, no fabric)' "$TMP/out")" -eq 2 ] ||
      fail "not every rank reports auto as shm+tcp"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS [$CASE]"
