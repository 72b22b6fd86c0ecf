#!/bin/sh
# A remote shell for MPI launchers on namespace "hosts" (Open MPI's plm_rsh_agent, MPICH
# Hydra's -launcher ssh -launcher-exec): runs the command inside the network namespace that
# stands for the host, as ssh would run it on that host.
#   netns_rsh.sh [ssh options...] HOST COMMAND...
# NETNS_RSH_HOSTS="HOST=NAMESPACE ..." maps each host, as the launcher names it (here an
# address), to its namespace. The options launchers give ssh (Hydra's -x) are ignored.
# Exits 255, as ssh does when it cannot connect, for a host not in the map.
while [ $# -gt 0 ]; do
  case $1 in
    -o | -p | -l | -i) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host=${1:-}
[ $# -gt 0 ] && shift
for pair in ${NETNS_RSH_HOSTS:-}; do
  if [ "${pair%%=*}" = "$host" ]; then
    # ssh hands the remote shell one command line; the launchers quote for that.
    exec ip netns exec "${pair#*=}" sh -c "$*"
  fi
done
echo "netns_rsh: no namespace for host '$host' (NETNS_RSH_HOSTS='${NETNS_RSH_HOSTS:-}')" >&2
exit 255
