#!/usr/bin/env bash
# Open MPI's remote-launch agent (--mca plm_rsh_agent) for scripts/compare.sh --netns: it
# stands in for ssh, "logging in" to the second namespace. Open MPI calls it as
#   netns_rsh.sh [ssh-style options] HOST COMMAND...
# CMP_ADDR1 / CMP_NS1 (set by compare.sh, inherited through mpirun) name the only host.
while [[ ${1:-} == -* ]]; do shift; done
host=$1
shift
if [ "$host" != "${CMP_ADDR1:-}" ]; then
  echo "netns_rsh: unknown host '$host' (only ${CMP_ADDR1:-none})" >&2
  exit 1
fi
exec ip netns exec "$CMP_NS1" /bin/sh -c "$*"
