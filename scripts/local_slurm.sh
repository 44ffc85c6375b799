#!/usr/bin/env bash
# A one-host Slurm for the tests and benchmarks: munged, slurmctld and slurmd on 127.0.0.1 with
# a config written for them (no GPU: the cpu backend runs the tasks), in a folder of its own.
#
#   bash scripts/local_slurm.sh start   # prints the line to export SLURM_CONF
#   bash scripts/local_slurm.sh stop
#   bash scripts/local_slurm.sh remove  # stop, then delete KPROF_SLURM_DIR (munge.key included)
#   bash scripts/local_slurm.sh status
#
# Needs root (the daemons run as root: SlurmUser=SlurmdUser=root) and Debian's slurm-wlm and
# munge (apt-get install slurm-wlm munge). KPROF_SLURM_DIR (default $TMPDIR/kprof-slurm) holds
# the config, the munge key and socket, state, logs and pid files; KPROF_SLURM_CPUS (default 8)
# is how many tasks the node runs at once (more than the host's cores: tasks mostly wait on
# process start-up); KPROF_SLURM_PORT (default 16817) is slurmctld's port, slurmd's the next.
# Partition "debug" (default) is preempted by partition "urgent" (PreemptMode=CANCEL): a job of
# "urgent" that needs the node's CPUs preempts the tasks of "debug", as a real cluster's
# higher-priority jobs do.
set -euo pipefail

DIR=${KPROF_SLURM_DIR:-${TMPDIR:-/tmp}/kprof-slurm}
CPUS=${KPROF_SLURM_CPUS:-8}
PORT=${KPROF_SLURM_PORT:-16817}
NODE=$(hostname -s)
export SLURM_CONF=$DIR/slurm.conf

write_config() {
  mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
  chmod 755 "$DIR/munge"  # the socket is for every user; the key itself is 0400
  [ -s "$DIR/munge/munge.key" ] || { dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
                                     chmod 400 "$DIR/munge/munge.key"; }
  cat >"$SLURM_CONF" <<CONF
ClusterName=kprof
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
# both daemons bind 127.0.0.1 only (SlurmctldHost's and NodeAddr's address), not every interface:
# NoCtldInAddrAny moves slurmctld, NoInAddrAny slurmd (slurm.conf(5), CommunicationParameters)
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=defer_batch
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MaxArraySize=10001
MaxJobCount=50000
MinJobAge=300
KillWait=5
InactiveLimit=0
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=1000 State=UNKNOWN
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP PriorityTier=1
PartitionName=urgent Nodes=$NODE MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF
CONF
}

pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  command -v slurmctld >/dev/null || { echo "slurmctld not found: apt-get install slurm-wlm munge" >&2; exit 1; }
  write_config
  pid_alive "$DIR/munged.pid" || munged --force --key-file="$DIR/munge/munge.key" \
      --socket="$DIR/munge/munge.socket" --pid-file="$DIR/munged.pid" \
      --log-file="$DIR/munged.log" --seed-file="$DIR/munge/munge.seed"
  pid_alive "$DIR/slurmctld.pid" || slurmctld -i
  pid_alive "$DIR/slurmd.pid" || slurmd
  for _ in $(seq 60); do
    if sinfo -h -o '%t' 2>/dev/null | grep -qx idle; then
      echo "local Slurm up: $(sinfo -h -o '%P %D %c %t')"
      echo "export SLURM_CONF=$SLURM_CONF"
      return 0
    fi
    sleep 0.5
  done
  echo "local Slurm did not come up; logs in $DIR:" >&2
  tail -n 20 "$DIR"/*.log >&2 || true
  exit 1
}

stop() {
  # jobs first, so no task outlives the daemons
  [ -f "$SLURM_CONF" ] && pid_alive "$DIR/slurmctld.pid" && { scancel --full --quiet --user "$(id -un)" 2>/dev/null || true; }
  for name in slurmd slurmctld munged; do
    if pid_alive "$DIR/$name.pid"; then
      pid=$(cat "$DIR/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    fi
  done
  echo "local Slurm stopped"
}

remove() {
  stop
  rm -rf "$DIR"  # the munge key, config, state and logs: nothing of this Slurm is left behind
  echo "removed $DIR"
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  remove) remove ;;
  status) sinfo ;;
  *) echo "usage: $0 start|stop|remove|status" >&2; exit 2 ;;
esac
