#!/usr/bin/env bash
# A Slurm cluster of several nodes on this one machine, for the `multinode` tests
# (docs/clusters.md, "A cluster of several nodes on one machine"). Each node is a network
# namespace with its own hostname (a UTS namespace), address, slurmd, port, spool, log,
# PMIx temporary folder and CPU and (emulated) GPU counts; slurmctld and munged run on the
# host. Nodes reach each other and the controller over a bridge, so MPI ranks on different
# nodes see different hosts and talk TCP, as across machines; ranks of one node share
# memory as on one machine. Debian's Slurm is not built for several slurmd on one host
# (its slurm-wlm-emulator is a front-end build, which runs every task on one front-end
# node), so each node gets a host of its own instead.
#
#   slurm/multinode_cluster.sh up               start what is not running, wait (bounded) until every node is idle
#   slurm/multinode_cluster.sh down             cancel its jobs, stop the daemons, remove the namespaces and the bridge
#   slurm/multinode_cluster.sh status           exit 0 when the controller and every node answer
#   slurm/multinode_cluster.sh env              print the line that points Slurm's commands at this cluster
#   slurm/multinode_cluster.sh kill-node NAME   lose a node: SIGKILL its slurmd and every process on it
#   slurm/multinode_cluster.sh start-node NAME  bring a lost node back (its slurmd registers again)
#   slurm/multinode_cluster.sh exec NAME CMD... run a command on a node (its namespaces)
#
# Nodes n1, n2, n3 (LRB_MN_NODES, 2 to 9): n1 and n2 with 2 CPUs and 2 GPUs, the third and
# later with 4 CPUs and 1 GPU. GPUs are emulated: gres whose files are character devices in
# the node's folder (each a null device), so Slurm binds them and sets CUDA_VISIBLE_DEVICES per task as on a
# real node. State, config and logs: ${LRB_MN_DIR:-/tmp/lrb-multinode}; controller port
# ${LRB_MN_PORT:-6917}, nodes' slurmd on the next ports; addresses ${LRB_MN_NET:-10.213.7}.x.
# Daemons are stopped by PID, never by name. Needs root (namespaces, the bridge).
set -euo pipefail

dir=${LRB_MN_DIR:-/tmp/lrb-multinode}
port=${LRB_MN_PORT:-6917}
net=${LRB_MN_NET:-10.213.7}
count=${LRB_MN_NODES:-3}
wait_s=${LRB_SLURM_WAIT:-90}
conf=$dir/slurm.conf
munge_dir=$dir/munge
socket=$munge_dir/munge.socket.2
bridge=lrbmn${port}

say() { echo "multinode_cluster: $*" >&2; }
die() { say "error: $*"; exit 1; }

case "$dir" in /*) ;; *) die "LRB_MN_DIR must be an absolute path (it is '$dir')" ;; esac
[[ "$dir" =~ ^[A-Za-z0-9._/+-]+$ ]] || die "LRB_MN_DIR may hold only letters, digits and . _ + - / (it is '$dir')"
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 65000 ] || die "LRB_MN_PORT must be a number in 1024..65000"
[[ "$count" =~ ^[2-9]$ ]] || die "LRB_MN_NODES must be 2 to 9 (it is '$count')"
[[ "$net" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "LRB_MN_NET must be the first three numbers of an IPv4 address (it is '$net')"

nodes() { local i; for i in $(seq "$count"); do echo "n$i"; done; }
netns_of() { echo "lrbmn${port}-$1"; }
addr_of() { echo "$net.$((10 + ${1#n}))"; }
cpus_of() { [ "${1#n}" -le 2 ] && echo 2 || echo 4; }
gpus_of() { [ "${1#n}" -le 2 ] && echo 2 || echo 1; }

# live_pid, start_munged, stop_pid, cancel_all_jobs
# shellcheck source=slurm/cluster_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/cluster_common.sh"

slurm_env() { export SLURM_CONF=$conf; }

write_conf() {
  mkdir -p "$dir"/{state,log,tmp}
  local tmp=$conf.tmp.$$ n
  {
    cat <<EOF
# Written by slurm/multinode_cluster.sh: $count nodes on one machine, each in its own network
# and UTS namespace (no systemd, no cgroups).
ClusterName=lrbmn
SlurmctldHost=$(hostname)($net.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=cred_expire=10,socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/nodes/%n/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/nodes/%n/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/nodes/%n/slurmd.log
TmpFS=$dir/tmp
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
MailProg=/bin/true
ReturnToService=2
KillWait=5
MinJobAge=600
# A node's CPUs and GPUs are what this file says, not what the machine has.
SlurmdParameters=config_overrides
GresTypes=gpu
# A lost node is noticed within about 20 s.
SlurmdTimeout=20
EOF
    for n in $(nodes); do
      echo "NodeName=$n NodeAddr=$(addr_of "$n") CPUs=$(cpus_of "$n") RealMemory=2000 Gres=gpu:$(gpus_of "$n") State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=n[1-$count] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
  } >"$tmp"
  mv "$tmp" "$conf"
  # Each node's emulated GPUs: placeholder files whose names end in the device's index.
  {
    for n in $(nodes); do
      mkdir -p "$dir/nodes/$n/dev"
      local g
      # Character devices, as Slurm requires, each the null device (major 1, minor 3).
      for g in $(seq 0 $(( $(gpus_of "$n") - 1 ))); do
        [ -c "$dir/nodes/$n/dev/nvidia$g" ] || { rm -f "$dir/nodes/$n/dev/nvidia$g"; mknod "$dir/nodes/$n/dev/nvidia$g" c 1 3; }
      done
      echo "NodeName=$n Name=gpu File=$dir/nodes/$n/dev/nvidia[0-$(( $(gpus_of "$n") - 1 ))]"
    done
  } >"$dir/gres.conf"
  # PMIx's temporary files: $dir/pmix, which is a folder of its own on each node (on_node).
  printf 'PMIxCliTmpDirBase=%s/pmix\n' "$dir" >"$dir/mpi.conf"
  mkdir -p "$dir/pmix"
  for n in $(nodes); do mkdir -p "$dir/nodes/$n/"{spool,pmix,tmp}; done
}

network_up() {
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
    ip addr add "$net.1/24" dev "$bridge"
    ip link set "$bridge" up
  fi
  local n ns
  for n in $(nodes); do
    ns=$(netns_of "$n")
    ip netns list | grep -qw "$ns" && continue
    ip netns add "$ns"
    ip link add "v${port}${n}" type veth peer name eth0 netns "$ns"
    ip link set "v${port}${n}" master "$bridge" up
    ip -n "$ns" addr add "$(addr_of "$n")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
}

# Runs a command as node NAME: in its network namespace, with its hostname.
on_node() {
  local n=$1; shift
  # nsenter rather than `ip netns exec`, which mounts a /sys of its own without the cgroup
  # file system slurmd reads.
  # A mount namespace too, where the node's own folders stand at the paths every node's
  # configuration names (PMIx's and the jobs' temporary folders; Slurm substitutes no node
  # name in those): as on separate machines, steps of one job do not share them.
  nsenter --net="/run/netns/$(netns_of "$n")" unshare --uts --mount --propagation private -- bash -c '
    hostname "$0" && mount --bind "$1/nodes/$0/pmix" "$1/pmix" && mount --bind "$1/nodes/$0/tmp" "$1/tmp" && shift && exec "$@"' \
    "$n" "$dir" "$@"
}

start_node() {
  local n=$1
  live_pid "$dir/nodes/$n/slurmd.pid" slurmd >/dev/null && return 0
  # As after a reboot: the node's temporary files are gone, and so are the sockets and PMIx
  # folders its killed step daemons left in the spool (a requeued job's step has the same
  # id and would find them taken).
  find "$dir/nodes/$n/spool" -type s -delete 2>/dev/null || true
  rm -rf "$dir/nodes/$n/spool"/pmix.*
  find "$dir/nodes/$n/pmix" "$dir/nodes/$n/tmp" -mindepth 1 -delete 2>/dev/null || true
  on_node "$n" slurmd -f "$conf" || die "slurmd of $n did not start; see $dir/nodes/$n/slurmd.log"
}

node_states() { slurm_env; timeout 10 sinfo -h -N -o '%N %T' 2>/dev/null || true; }

wait_idle() {
  local i states bad
  for i in $(seq $((wait_s * 2))); do
    states=$(node_states)
    bad=$(awk '$2 !~ /^(idle|mixed|allocated)$/' <<<"$states")
    [ -n "$states" ] && [ -z "$bad" ] && [ "$(wc -l <<<"$states")" -eq "$count" ] && return 0
    slurm_env
    while read -r n s; do
      case "$s" in down*|drain*) scontrol update nodename="$n" state=resume >/dev/null 2>&1 || true ;; esac
    done <<<"$bad"
    sleep 0.5
  done
  die "nodes not idle after ${wait_s} s: $(tr '\n' ' ' <<<"$states"); see $dir/log/slurmctld.log and $dir/nodes/*/slurmd.log"
}

up() {
  command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v ip >/dev/null ||
    die "slurm-wlm, munge and iproute2 are needed: run scripts/setup.sh"
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, a bridge, daemons as root)"
  if ! live_pid "$dir/slurmctld.pid" slurmctld >/dev/null; then write_conf; fi
  network_up
  start_munged
  if ! live_pid "$dir/slurmctld.pid" slurmctld >/dev/null; then
    slurmctld -c -f "$conf" || die "slurmctld did not start; see $dir/log/slurmctld.log"
  fi
  local n
  for n in $(nodes); do start_node "$n"; done
  wait_idle
  say "up: $count nodes idle (SLURM_CONF=$conf)"
}

kill_node() {
  local n=$1 ns pids
  ns=$(netns_of "$n")
  ip netns list | grep -qw "$ns" || die "no node $n"
  # Every process of the node: its slurmd, slurmstepd and the job's tasks on it.
  pids=$(ip netns pids "$ns" || true)
  # shellcheck disable=SC2086
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
  rm -f "$dir/nodes/$n/slurmd.pid"
  say "node $n lost (${pids:+$(wc -w <<<"$pids") processes killed})"
}

down() {
  if live_pid "$dir/slurmctld.pid" slurmctld >/dev/null; then
    slurm_env
    cancel_all_jobs
  fi
  local n ns
  for n in $(nodes); do stop_pid "$dir/nodes/$n/slurmd.pid" slurmd; done
  stop_pid "$dir/slurmctld.pid" slurmctld
  stop_pid "$munge_dir/munged.pid" munged
  for n in $(nodes); do
    ns=$(netns_of "$n")
    if ip netns list | grep -qw "$ns"; then
      # shellcheck disable=SC2046
      kill -KILL $(ip netns pids "$ns") 2>/dev/null || true
      ip netns del "$ns"
    fi
  done
  ip link del "$bridge" 2>/dev/null || true
  say "down (logs kept in $dir)"
}

status() {
  local ok=0 n pid
  if pid=$(live_pid "$munge_dir/munged.pid" munged); then echo "munged: running (pid $pid)"; else echo "munged: not running"; ok=1; fi
  if pid=$(live_pid "$dir/slurmctld.pid" slurmctld); then echo "slurmctld: running (pid $pid)"; else echo "slurmctld: not running"; ok=1; fi
  for n in $(nodes); do
    if pid=$(live_pid "$dir/nodes/$n/slurmd.pid" slurmd); then echo "$n: slurmd running (pid $pid)"; else echo "$n: slurmd not running"; ok=1; fi
  done
  [ "$ok" = 0 ] && node_states && echo "SLURM_CONF=$conf"
  return $ok
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) echo "export SLURM_CONF=$conf" ;;
  kill-node) [ $# -eq 2 ] || die "kill-node NAME"; kill_node "$2" ;;
  start-node) [ $# -eq 2 ] || die "start-node NAME"; start_node "$2"; wait_idle ;;
  exec) [ $# -ge 3 ] || die "exec NAME CMD..."; n=$2; shift 2; on_node "$n" "$@" ;;
  *) echo "usage: $0 up|down|status|env|kill-node NAME|start-node NAME|exec NAME CMD...   (state in \$LRB_MN_DIR, default /tmp/lrb-multinode)" >&2; exit 2 ;;
esac
