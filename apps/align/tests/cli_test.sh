#!/usr/bin/env bash
# weft-align as a user runs it. Usage: cli_test.sh PATH/TO/weft-align omp|no-omp
# Checks: gzip and FASTQ input, stdin, identical output for weft / serial / OpenMP, the progress
# bar (only on a terminal or with --progress always; never with --quiet), --stats, exit statuses,
# and that a failed run leaves no output file behind.
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
bin=$1
omp=${2:-omp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

fail() { echo "FAIL: $*" >&2; exit 1; }
check() { local what=$1; shift; "$@" || fail "$what"; }

"$bin" gen --seed 7 --refs 20 --ref-min 100 --ref-max 1000 --queries 30 --qlen-min 50 \
  --qlen-max 80 --fastq --ref-out refs.fa.gz --query-out q.fq
check "references are gzip" bash -c '[[ $(head -c2 refs.fa.gz | od -An -tx1 | tr -d " ") == 1f8b ]]'
check "queries are FASTQ" bash -c '[[ $(head -c1 q.fq) == @ ]]'
"$bin" gen --seed 7 --refs 20 --ref-min 100 --ref-max 1000 --queries 30 --qlen-min 50 \
  --qlen-max 80 --fastq --ref-out refs2.fa --query-out q2.fq
check "generator is reproducible" cmp -s q.fq q2.fq
check "gzip and plain references hold the same text" bash -c 'gzip -dc refs.fa.gz | cmp -s - refs2.fa'

"$bin" map --backend serial refs.fa.gz q.fq >serial.tsv
check "one line per query plus the two header lines" bash -c '[[ $(wc -l <serial.tsv) == 32 ]]'
"$bin" map --streams 2 --workers 2 --threads 2 refs.fa.gz q.fq >weft.tsv 2>weft.err
check "weft output equals serial output" cmp -s weft.tsv serial.tsv
check "no progress bar when stderr is not a terminal" test ! -s weft.err
"$bin" map --streams 2 --workers 3 --threads 2 --unit tasklet --schedule static --chunk 4 \
  -o tasklet.tsv refs2.fa q2.fq
check "tasklets, static schedule: same output" cmp -s tasklet.tsv serial.tsv
if [[ $omp == omp ]]; then
  "$bin" map --backend omp --workers 2 --threads 2 refs.fa.gz q.fq >omp.tsv
  check "OpenMP output equals serial output" cmp -s omp.tsv serial.tsv
fi
gzip -dc refs.fa.gz | "$bin" map --streams 2 - q.fq >stdin.tsv
check "references from stdin" cmp -s stdin.tsv serial.tsv

"$bin" map --streams 2 --progress always refs.fa.gz q.fq >p.tsv 2>p.err
check "--progress always draws the bar" grep -q "30/30 queries 100%" p.err
check "the bar does not touch stdout" cmp -s p.tsv serial.tsv
"$bin" map --streams 2 --progress always --quiet refs.fa.gz q.fq >/dev/null 2>quiet.err
check "--quiet silences the bar" test ! -s quiet.err
if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1; then
  # On a terminal (a pty from script(1)) the bar appears without being asked for.
  script -qec "'$bin' map --streams 2 -o tty.tsv refs.fa.gz q.fq" /dev/null >tty.log 2>&1 || true
  check "bar on a terminal" grep -q "30/30 queries" tty.log
  check "terminal run output" cmp -s tty.tsv serial.tsv
fi

"$bin" map --streams 2 --stats -o /dev/null refs.fa.gz q.fq 2>stats.err
check "--stats prints JSON" grep -q '^{"backend":"weft","workers":2,"threads":1,.*"streams":2,.*"seconds":' stats.err
check "--stats gives the mapping options" grep -q '"mode":"hw","strand":"both","max_dist":-1,"ties":"first","alphabet":"ACGTUNRYSWKMBDHV","match":"iupac","prune":true' stats.err
"$bin" map --backend serial --stats --max-dist 9 --ties all -o /dev/null refs.fa.gz q.fq 2>serial-stats.err
check "--stats: no unit or weft scheduler for serial" grep -q '"unit":null,.*"max_dist":9,"ties":"all",.*"weft_sched":null' serial-stats.err

set +e
"$bin" map -o out.tsv refs.fa.gz missing.fq 2>e1.err
rc=$?
set -e
check "missing file: exit status 1" test "$rc" = 1
check "missing file: message" grep -q "^weft-align: missing.fq: cannot open: No such file or directory" e1.err
check "missing file: no output" test ! -e out.tsv
printf '@a\nACGT\n+\nII\n' >bad.fq
set +e
"$bin" map -o out.tsv refs.fa.gz bad.fq 2>e2.err
rc=$?
set -e
check "malformed FASTQ: exit status 1" test "$rc" = 1
check "malformed FASTQ: file and line" grep -q "^weft-align: bad.fq:4: quality string of record 'a'" e2.err
check "malformed FASTQ: no output, no temporary" test -z "$(ls -A | grep -e out.tsv -e '\.tmp\.')"
set +e
"$bin" map --workers=0 refs.fa.gz q.fq >/dev/null 2>e3.err
rc=$?
set -e
check "bad option: exit status 2" test "$rc" = 2
check "bad option: message" grep -q "option --workers: expected an integer" e3.err
"$bin" --help | grep -q "weft-align map" || fail "--help"
echo "weft-align CLI: all checks passed"
