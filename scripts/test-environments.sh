#!/usr/bin/env bash
# The suite (vitest, what `npm test` runs after build, lint and typecheck) where users run it:
#   root-0700   as root, in a clone under a directory only its owner may enter (mktemp -d)
#   non-root    as another user (nobody, or --user NAME), on a copy that user owns
#   tmpdir      with TMPDIR on another path (/var/tmp, or --tmpdir DIR)
#   no-network  in a network namespace of its own: loopback only (unshare -n)
#   cpu-burners with two processes spinning on the CPU beside it
# Each environment runs on a fresh clone of HEAD (committed work only) with this checkout's
# node_modules copied (no registry needed) and dist/ built there. One line per run: the
# environment, exit code, wall time, tests passed/failed/skipped; the JSON reports stay in
# the work directory with --keep. Exit 0 only when every run of every environment passed.
#
# Usage: scripts/test-environments.sh [--runs N] [--only env,env] [--user NAME] [--tmpdir DIR]
#                                     [--keep] [-- vitest args, e.g. test/cli.test.ts]
# Run it on a quiet machine: each run is a whole suite (≈ 2–3 min on 2 cores).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=1
ONLY=root-0700,non-root,tmpdir,no-network,cpu-burners
RUN_AS=nobody
OTHER_TMP=/var/tmp
KEEP=0
VITEST_ARGS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --user) RUN_AS=$2; shift 2 ;;
    --tmpdir) OTHER_TMP=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --) shift; VITEST_ARGS=("$@"); break ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -d $REPO/node_modules ]] || { echo "run npm ci in $REPO first: its node_modules are copied" >&2; exit 2; }

IS_ROOT=0
[[ $(id -u) -eq 0 ]] && IS_ROOT=1
# mktemp -d makes a 0700 directory: the "private checkout" case for root and users alike.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ccs-bulk-envs.XXXXXX")
BURNERS=()
cleanup() {
  for pid in "${BURNERS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [[ $KEEP -eq 0 ]]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT

# A clone of HEAD under $1 with node_modules copied and dist/ built, owned by $2 (optional).
checkout() {
  local dir=$1 owner=${2:-}
  git clone --quiet --no-hardlinks "$REPO" "$dir"
  cp -a "$REPO/node_modules" "$dir/node_modules"
  (cd "$dir" && node node_modules/typescript/bin/tsc -p tsconfig.build.json)
  if [[ -n $owner ]]; then chown -R "$owner" "$dir"; fi
}

# Runs vitest in checkout $2 behind the command prefix "$@"; prints one result line.
run_suite() {
  local name=$1 dir=$2 run=$3; shift 3
  local report="$WORK/$name-$run.json" log="$WORK/$name-$run.log" started ended code=0
  started=$(date +%s)
  # The report goes into the checkout first: the user the suite runs as may not enter $WORK.
  (cd "$dir" && "$@" node node_modules/vitest/vitest.mjs run --reporter=default --reporter=json \
    --outputFile.json=vitest-report.json "${VITEST_ARGS[@]}") >"$log" 2>&1 || code=$?
  ended=$(date +%s)
  mv "$dir/vitest-report.json" "$report" 2>/dev/null || true
  local counts="no report"
  if [[ -s $report ]]; then
    counts=$(node -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
      console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped of ${r.numTotalTests}`);
    ' "$report")
  fi
  printf '%-12s run %d  exit %d  %4d s  %s\n' "$name" "$run" "$code" $((ended - started)) "$counts"
  if [[ $code -ne 0 ]]; then
    FAILED=1
    KEEP=1
    grep -E '(FAIL|×|✗) ' "$log" | head -20 | sed 's/^/    /' || true
    echo "    log: $log"
  fi
  # A skipped test prints why; show those lines.
  grep -E 'skipped:' "$log" | head -5 | sed 's/^/    /' || true
}

env_root_0700() {
  local dir="$WORK/root-0700/ccs-bulk"
  mkdir -m 700 "$WORK/root-0700"
  checkout "$dir"
  for run in $(seq 1 "$RUNS"); do run_suite root-0700 "$dir" "$run" env; done
}

env_non_root() {
  if [[ $IS_ROOT -eq 0 ]]; then
    # Already someone else than root: this environment is the plain run.
    local dir="$WORK/non-root/ccs-bulk"
    mkdir -p "$WORK/non-root"
    checkout "$dir"
    for run in $(seq 1 "$RUNS"); do run_suite non-root "$dir" "$run" env; done
    return
  fi
  local uid gid home dir
  uid=$(id -u "$RUN_AS") gid=$(id -g "$RUN_AS")
  # That user must be able to enter every directory on the way: a base of its own under a
  # world-searchable directory, not under $WORK (0700).
  home=$(mktemp -d /tmp/ccs-bulk-env-user.XXXXXX)
  chmod 755 "$home"
  dir="$home/ccs-bulk"
  checkout "$dir" "$uid:$gid"
  mkdir -p "$home/home" && chown "$uid:$gid" "$home/home"
  for run in $(seq 1 "$RUNS"); do
    run_suite non-root "$dir" "$run" \
      setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
      env HOME="$home/home" PATH="$PATH" TMPDIR=/tmp
  done
  [[ $KEEP -eq 1 ]] || rm -rf "$home"
}

env_tmpdir() {
  local dir="$WORK/tmpdir/ccs-bulk" tmp
  mkdir -p "$WORK/tmpdir"
  checkout "$dir"
  # Another path than /tmp (another file system where there is one), with a space in it.
  tmp=$(mktemp -d "$OTHER_TMP/ccs-bulk-tmpdir.XXXXXX")
  mkdir "$tmp/temp files"
  for run in $(seq 1 "$RUNS"); do run_suite tmpdir "$dir" "$run" env TMPDIR="$tmp/temp files"; done
  rm -rf "$tmp"
}

env_no_network() {
  local dir="$WORK/no-network/ccs-bulk" unshare_flags=-n
  mkdir -p "$WORK/no-network"
  checkout "$dir"
  # Without root, a user namespace gives the right to bring loopback up in a namespace of one's own.
  [[ $IS_ROOT -eq 1 ]] || unshare_flags=-rn
  if ! unshare "$unshare_flags" true 2>/dev/null; then
    echo "no-network   skipped: unshare $unshare_flags is not permitted here"
    return
  fi
  for run in $(seq 1 "$RUNS"); do
    # A namespace starts with loopback down: a machine without a network still has one.
    run_suite no-network "$dir" "$run" unshare "$unshare_flags" sh -c 'ip link set lo up && exec "$@"' sh
  done
}

env_cpu_burners() {
  local dir="$WORK/cpu-burners/ccs-bulk"
  mkdir -p "$WORK/cpu-burners"
  checkout "$dir"
  for run in $(seq 1 "$RUNS"); do
    BURNERS=()
    for _ in 1 2; do
      node -e 'for (;;);' &
      BURNERS+=($!)
    done
    run_suite cpu-burners "$dir" "$run" env
    for pid in "${BURNERS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait "${BURNERS[@]}" 2>/dev/null || true
    BURNERS=()
  done
}

FAILED=0
echo "ccs-bulk suite environments: $(git -C "$REPO" rev-parse --short HEAD), $RUNS run(s) each, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for name in ${ONLY//,/ }; do
  case $name in
    root-0700) env_root_0700 ;;
    non-root) env_non_root ;;
    tmpdir) env_tmpdir ;;
    no-network) env_no_network ;;
    cpu-burners) env_cpu_burners ;;
    *) echo "unknown environment: $name" >&2; exit 2 ;;
  esac
done
exit "$FAILED"
