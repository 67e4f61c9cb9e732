# Sourced by slurm/test_cluster.sh (one node) and slurm/multinode_cluster.sh (several): what
# both test clusters do alike. The caller sets $munge_dir, $socket and say()/die().

# The PID recorded in a pid file, if that process is alive and runs the expected program
# (a stale file whose PID was reused by something else must not be signalled).
live_pid() {  # pidfile program
  local f=$1 prog=$2 pid exe
  [ -s "$f" ] || return 1
  pid=$(tr -dc 0-9 <"$f")
  [ -n "$pid" ] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  # Debian installs the daemons as slurmctld-wlm and slurmd-wlm.
  case "$(basename "$exe")" in "$prog" | "$prog"-wlm) ;; *) return 1 ;; esac
  echo "$pid"
}

# munged with its own socket and pid file under $munge_dir, so a system munged (or another
# test cluster) is left alone.
start_munged() {
  if live_pid "$munge_dir/munged.pid" munged >/dev/null; then return 0; fi
  mkdir -p "$munge_dir"
  chown munge:munge "$munge_dir"
  chmod 0755 "$munge_dir"
  if [ ! -s /etc/munge/munge.key ]; then
    say "creating /etc/munge/munge.key"
    runuser -u munge -- mungekey -c
  fi
  runuser -u munge -- munged --socket="$socket" --pid-file="$munge_dir/munged.pid" \
    --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" \
    || die "munged did not start; see $munge_dir/munged.log"
  local i
  for i in $(seq 50); do
    munge -n --socket="$socket" 2>/dev/null | unmunge --socket="$socket" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "munge does not answer on $socket; see $munge_dir/munged.log"
}

stop_pid() {  # pidfile program
  local pid i
  pid=$(live_pid "$1" "$2") || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  say "$2 (pid $pid) did not stop in 10 s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
}

# Cancels every job of the cluster (SLURM_CONF set) and waits, bounded, until none runs:
# before the daemons stop, so no job step outlives its cluster.
cancel_all_jobs() {
  local jobs i
  jobs=$(timeout 10 squeue -h -o %A 2>/dev/null || true)
  [ -n "$jobs" ] || return 0
  # shellcheck disable=SC2086  # one job id per word
  timeout 10 scancel $jobs 2>/dev/null || true
  for i in $(seq 60); do
    [ -z "$(timeout 10 squeue -h -t running,completing -o %A 2>/dev/null || true)" ] && break
    sleep 0.5
  done
}
