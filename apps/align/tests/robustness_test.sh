#!/usr/bin/env bash
# weft-align against hostile or unlucky surroundings. Usage: robustness_test.sh PATH/TO/weft-align
# Checks: SIGHUP, SIGINT and SIGTERM during a run remove the temporary output file and end the
# process by that signal; an ignored SIGHUP (nohup) stays ignored; a symlink placed at -o during
# a run is refused at the rename; a 64 MiB header line without a newline gives a short message
# and is not held in memory.
# The runs read their queries from a FIFO this script holds open, so each one is known to be
# mid-run, its temporary file created, when it is signalled: no timing decides the outcome.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" gen --seed 3 --refs 5 --ref-min 100 --ref-max 200 --queries 20 --qlen-min 30 \
  --qlen-max 40 --ref-out refs.fa --query-out q.fa
mkfifo q.pipe

# Starts `weft-align map -o OUT refs.fa -` (extra leading arguments go to env) on the FIFO, sends
# it the queries without ending its input, and waits (at most 30 s) for its temporary file.
pid=
start_blocked() {
  local out=$1
  shift
  exec 3<>q.pipe  # read-write: no open of the FIFO blocks, and its input stays open
  # Background jobs of a non-interactive shell ignore SIGINT: env gives the program defaults.
  env "$@" "$bin" map --streams 1 -o "$out" refs.fa - <q.pipe 2>"$out.err" 3>&- &
  pid=$!
  cat q.fa >&3
  for ((i = 0; i < 600; i++)); do
    compgen -G ".$out.tmp.*" >/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || fail "$out: the run ended before its input did"
    sleep 0.05
  done
  fail "$out: no temporary file after 30 s"
}
finish() {
  exec 3>&-
  set +e
  wait "$pid"
  rc=$?
  set -e
}
no_temporary() { ! compgen -G '.*.tmp.*' >/dev/null || fail "$1: temporary left: $(ls -A)"; }

for sig in HUP INT TERM; do
  start_blocked "out-$sig.tsv" --default-signal=HUP,INT,TERM
  kill -s "$sig" "$pid"
  finish
  [[ $rc == $((128 + $(kill -l "$sig"))) ]] || fail "SIG$sig: exit status $rc, not death by SIG$sig"
  no_temporary "SIG$sig"
  [[ ! -e out-$sig.tsv ]] || fail "SIG$sig: output created"
done

# nohup: an ignored SIGHUP stays ignored and the run completes.
start_blocked nohup.tsv --ignore-signal=HUP
kill -s HUP "$pid"
finish
[[ $rc == 0 ]] || fail "ignored SIGHUP: exit status $rc"
[[ $(wc -l <nohup.tsv) == 22 ]] || fail "ignored SIGHUP: incomplete output"
no_temporary "ignored SIGHUP"

# A symlink placed at the output path during the run is not replaced, nor its target written.
echo keep >victim.txt
start_blocked late-link.tsv
ln -s victim.txt late-link.tsv
finish
[[ $rc == 1 ]] || fail "late symlink: exit status $rc"
grep -qx "weft-align: late-link.tsv: is a symbolic link; refusing to write through it (give the path of the file itself)" late-link.tsv.err ||
  fail "late symlink: message: $(cat late-link.tsv.err)"
[[ -L late-link.tsv && $(cat victim.txt) == keep ]] || fail "late symlink: replaced or written"
no_temporary "late symlink"

# One 64 MiB header line, no newline: refused when it passes 1 MiB, so the run stays far below the
# line's size in memory (reading it whole took about 5 times its size), and the message quotes
# 80 bytes of it.
{ printf '>'; head -c $((64 << 20)) /dev/zero | tr '\0' a; } >long.fa
for order in "refs.fa long.fa" "long.fa refs.fa"; do
  set +e
  if [[ -x /usr/bin/time ]]; then
    # shellcheck disable=SC2086
    /usr/bin/time -f %M -o rss.txt "$bin" map -o long.tsv $order 2>long.err
  else
    # shellcheck disable=SC2086
    "$bin" map -o long.tsv $order 2>long.err
  fi
  rc=$?
  set -e
  [[ $rc == 1 ]] || fail "64 MiB header ($order): exit status $rc"
  grep -qx "weft-align: long.fa:1: header line longer than 1048576 bytes, starting '>a\{79\}'" long.err ||
    fail "64 MiB header ($order): message: $(head -c 300 long.err)"
  if [[ -x /usr/bin/time ]]; then
    rss=$(tail -n1 rss.txt)
    ((rss < 64 * 1024)) || fail "64 MiB header ($order): peak RSS ${rss} KiB"
  else
    echo "note: no /usr/bin/time, the memory bound is not checked"
  fi
  [[ ! -e long.tsv ]] || fail "64 MiB header ($order): output written"
done

echo "weft-align robustness: all checks passed"
