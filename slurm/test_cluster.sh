#!/usr/bin/env bash
# The one-node Slurm cluster the `slurm` tests run on (docs/clusters.md, "Slurm"): munged,
# slurmctld and slurmd as root, on this machine, every file of it under one folder.
#
#   slurm/test_cluster.sh up       start whatever is not running, wait (bounded) until the node is idle
#   slurm/test_cluster.sh down     cancel its jobs, stop the daemons by the PIDs they recorded
#   slurm/test_cluster.sh status   exit 0 when all three daemons run and the node answers
#   slurm/test_cluster.sh env      print the line that points Slurm's commands at this cluster
#
# State, config and logs: ${LRB_SLURM_DIR:-/tmp/lrb-slurm}. Ports: ${LRB_SLURM_PORT:-6817}
# (slurmctld) and the next one (slurmd). munged gets its own socket there, so a system munged
# (or another engineer's cluster under another folder and port) is left alone.
# Daemons are stopped by PID, never by name: other people's processes share this machine.
set -euo pipefail

dir=${LRB_SLURM_DIR:-/tmp/lrb-slurm}
port=${LRB_SLURM_PORT:-6817}
wait_s=${LRB_SLURM_WAIT:-60}
conf=$dir/slurm.conf
munge_dir=$dir/munge
socket=$munge_dir/munge.socket.2

say() { echo "test_cluster: $*" >&2; }
die() { say "error: $*"; exit 1; }

case "$dir" in
  /*) ;;
  *) die "LRB_SLURM_DIR must be an absolute path (it is '$dir')" ;;
esac
[[ "$dir" =~ ^[A-Za-z0-9._/+-]+$ ]] || die "LRB_SLURM_DIR may hold only letters, digits and . _ + - / (it is '$dir')"
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 65534 ] || die "LRB_SLURM_PORT must be a number in 1024..65534"

# live_pid, start_munged, stop_pid, cancel_all_jobs
# shellcheck source=slurm/cluster_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/cluster_common.sh"

slurm_env() { export SLURM_CONF=$conf; }

node_state() { slurm_env; timeout 10 sinfo -h -o %T 2>/dev/null | head -n1 || true; }

write_conf() {
  local node host
  # slurmd -C prints this machine's real CPUs, sockets, cores and memory as a NodeName line.
  node=$(slurmd -C | head -n1)
  [[ "$node" == NodeName=* ]] || die "slurmd -C printed no NodeName line: '$node'"
  host=${node#NodeName=}
  host=${host%% *}
  mkdir -p "$dir"/{state,spool,tmp,log}
  local tmp=$conf.tmp.$$
  cat >"$tmp" <<EOF
# Written by slurm/test_cluster.sh: a one-node test cluster (no systemd, no cgroups).
ClusterName=lrbci
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire=10: a requeued job starts again after ~11 s instead of ~2 min.
AuthInfo=cred_expire=10,socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
TmpFS=$dir/tmp
# The defaults (cgroup) fail without cgroups.
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
MailProg=/bin/true
ReturnToService=2
KillWait=5
# Finished jobs stay visible to scontrol for 10 min: the tests read their final state.
MinJobAge=600
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$tmp" "$conf"
}

up() {
  command -v slurmctld >/dev/null && command -v munged >/dev/null \
    || die "slurm-wlm and munge are not installed: run scripts/setup.sh"
  local started=0
  if ! live_pid "$dir/slurmctld.pid" slurmctld >/dev/null && ! live_pid "$dir/slurmd.pid" slurmd >/dev/null; then
    write_conf
  fi
  if ! live_pid "$munge_dir/munged.pid" munged >/dev/null; then start_munged; started=1; fi
  # Daemons fork into the background and write their pid files (SlurmctldPidFile, SlurmdPidFile).
  # -c: a test cluster starts without the jobs of an earlier life.
  if ! live_pid "$dir/slurmctld.pid" slurmctld >/dev/null; then
    slurmctld -c -f "$conf" || die "slurmctld did not start; see $dir/log/slurmctld.log"
    started=1
  fi
  if ! live_pid "$dir/slurmd.pid" slurmd >/dev/null; then
    slurmd -f "$conf" || die "slurmd did not start; see $dir/log/slurmd.log"
    started=1
  fi
  local i state=""
  for i in $(seq $((wait_s * 2))); do
    state=$(node_state)
    case "$state" in
      idle|mixed|allocated) break ;;
      down*|drain*) slurm_env; scontrol update nodename="$(slurmd -C | head -n1 | sed 's/^NodeName=\([^ ]*\).*/\1/')" state=resume >/dev/null 2>&1 || true ;;
    esac
    sleep 0.5
  done
  case "$state" in
    idle|mixed|allocated) ;;
    *) die "the node is '${state:-not answering}' after ${wait_s} s; see $dir/log/slurmctld.log and $dir/log/slurmd.log" ;;
  esac
  if [ "$started" = 1 ]; then say "up: node $state (SLURM_CONF=$conf)"; else say "already up: node $state (SLURM_CONF=$conf)"; fi
}

down() {
  # Jobs first, while the daemons still run, so no job step outlives its cluster.
  if live_pid "$dir/slurmctld.pid" slurmctld >/dev/null; then
    slurm_env
    cancel_all_jobs
  fi
  stop_pid "$dir/slurmd.pid" slurmd
  stop_pid "$dir/slurmctld.pid" slurmctld
  stop_pid "$munge_dir/munged.pid" munged
  say "down (logs kept in $dir/log)"
}

status() {
  local ok=0 d
  for d in "munged:$munge_dir/munged.pid" "slurmctld:$dir/slurmctld.pid" "slurmd:$dir/slurmd.pid"; do
    if pid=$(live_pid "${d#*:}" "${d%%:*}"); then echo "${d%%:*}: running (pid $pid)"; else echo "${d%%:*}: not running"; ok=1; fi
  done
  if [ "$ok" = 0 ]; then
    echo "node: $(node_state)"
    echo "SLURM_CONF=$conf"
  fi
  return $ok
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) echo "usage: $0 up|down|status|env   (state in \$LRB_SLURM_DIR, default /tmp/lrb-slurm)" >&2; exit 2 ;;
esac
