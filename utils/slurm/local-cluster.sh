#!/usr/bin/env bash
#===- utils/slurm/local-cluster.sh - a one-node Slurm cluster on loopback -===#
#
# Starts (or stops) slurmctld and slurmd for this machine alone, configured
# in DIR, so that `srun` can launch training executables in tests. For
# tests only: no authentication (auth/none), processes tracked by process
# group, as many task slots as asked (more than the cores is fine). Needs
# root and Debian's slurm-wlm (utils/setup.sh installs it).
#
#   utils/slurm/local-cluster.sh start DIR [SLOTS]   # then: export SLURM_CONF=DIR/slurm.conf
#   utils/slurm/local-cluster.sh stop DIR
#
#===----------------------------------------------------------------------===#
set -euo pipefail

action="${1:?usage: local-cluster.sh start|stop DIR [SLOTS]}"
dir="$(mkdir -p "${2:?a directory}" && cd "$2" && pwd)"
slots="${3:-8}"
conf="$dir/slurm.conf"

stop() {
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid"; do
    if [[ -f "$pidfile" ]]; then
      kill "$(cat "$pidfile")" 2>/dev/null || true
      rm -f "$pidfile"
    fi
  done
}

if [[ "$action" == stop ]]; then
  stop
  exit 0
fi
[[ "$action" == start ]] || { echo "unknown action '$action'" >&2; exit 2; }
[[ "$(id -u)" == 0 ]] || { echo "local-cluster.sh: needs root" >&2; exit 1; }
command -v slurmctld >/dev/null || { echo "local-cluster.sh: install slurm-wlm" >&2; exit 1; }

host="$(hostname -s)"
# Free ports for the controller and the node daemon.
read -r ctld_port slurmd_port < <(/usr/bin/python3 - <<'PY'
import socket
ports = []
socks = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
    ports.append(s.getsockname()[1])
print(*ports)
PY
)
mkdir -p "$dir/state" "$dir/spool"
cat > "$conf" <<CONF
ClusterName=ober-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=pmix
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
InactiveLimit=0
MinJobAge=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$slots State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF

stop
slurmctld -f "$conf" -i
slurmd -f "$conf"
export SLURM_CONF="$conf"
for _ in $(seq 1 60); do
  if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "local-cluster.sh: up (SLURM_CONF=$conf)"
    exit 0
  fi
  sleep 0.5
done
echo "local-cluster.sh: the node did not come up; logs in $dir" >&2
tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
exit 1
