#!/usr/bin/env bash
# weft-align under mpirun: 4 ranks on loopback give output byte-identical to one process (the
# same binary, started without mpirun), for several chunk sizes; a bad input fails the job with
# rank 0's message and leaves no output. Usage: mpi_test.sh PATH/TO/weft-align PATH/TO/mpirun
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
bin=$1
mpirun=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }
run4() { timeout 120 "$mpirun" --allow-run-as-root --oversubscribe -np 4 "$bin" "$@"; }

"$bin" gen --seed 5 --refs 30 --ref-min 100 --ref-max 800 --queries 300 --qlen-min 40 \
  --qlen-max 100 --fastq --ref-out refs.fa --query-out q.fq
for batch in 1 37; do
  "$bin" map --streams 1 --batch "$batch" --ties all --cigar -o one.tsv refs.fa q.fq
  run4 map --streams 1 --batch "$batch" --ties all --cigar -o four.tsv refs.fa q.fq
  cmp one.tsv four.tsv || fail "4 ranks, --batch $batch: output differs from one process"
done
[[ $(wc -l <one.tsv) -gt 300 ]] || fail "too few hits"
# SAM and BAM: the other ranks send SAM text, rank 0 writes it (BAM: encodes it) in order. Only
# the @PG line differs (its command line names the output file). BAM is read with samtools, when
# installed.
formats=(sam)
command -v samtools >/dev/null && formats+=(bam)
for format in "${formats[@]}"; do
  "$bin" map --streams 1 --batch 37 --ties all --format $format -o one.$format refs.fa q.fq
  run4 map --streams 1 --batch 37 --ties all --format $format -o four.$format refs.fa q.fq
  text() { if [[ $1 == *.bam ]]; then samtools view -h --no-PG "$1"; else cat "$1"; fi | grep -v '^@PG'; }
  [[ $(text one.$format | wc -l) -gt 300 ]] || fail "--format $format: too few records"
  cmp <(text one.$format) <(text four.$format) ||
    fail "4 ranks, --format $format: output differs from one process"
done

(cat q.fq; printf '@bad\nACXT\n+\nIIII\n') >bad.fq
set +e
run4 map --streams 1 --batch 16 -o bad.tsv refs.fa bad.fq 2>bad.err
rc=$?
set -e
[[ $rc != 0 ]] || fail "a bad input must fail the job"
grep -q "^weft-align: bad.fq:1202: character 'X' (column 3)" bad.err || fail "rank 0's message"
[[ $(grep -c "^weft-align:" bad.err) == 1 ]] || fail "one message, from rank 0"
[[ -z $(ls -A | grep -e bad.tsv -e '\.tmp\.') ]] || fail "no output, no temporary"
echo "weft-align MPI: all checks passed"
