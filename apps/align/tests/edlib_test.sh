#!/usr/bin/env bash
# weft-align against Debian's edlib-aligner (the edlib command line), both strands: for every
# query, the best distance over all references and both strands, the (reference, strand) pairs
# that reach it (--ties all), and each hit's start and end (one of edlib-aligner's locations)
# must agree; with and without pruning. Usage: edlib_test.sh PATH/TO/weft-align PATH/TO/edlib-aligner
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
bin=$1
edlib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" gen --seed 9 --refs 8 --ref-min 150 --ref-max 600 --queries 24 --qlen-min 30 --qlen-max 70 \
  --error-rate 0.08 --fastq --ref-out refs.fa --query-out gen.fq
# A copy of two references under other names, so that queries tie between references.
awk '/^>/ { n++ } n == 3 || n == 6 { sub(/^>ref[0-9]+/, "&_copy"); print }' refs.fa >copies.fa
cat copies.fa >>refs.fa
# Queries: every other one reverse-complemented (by awk, independently of weft-align), and the
# reverse complement of every query, for edlib-aligner's reverse strand.
rc_awk='function rc(s,   r, i) { r = ""; for (i = length(s); i >= 1; i--) r = r comp[substr(s, i, 1)]; return r }
  BEGIN { comp["A"] = "T"; comp["C"] = "G"; comp["G"] = "C"; comp["T"] = "A" }'
awk "$rc_awk"' NR % 4 == 1 { name = substr($1, 2) }
  NR % 4 == 2 { s = (n++ % 2) ? rc($0) : $0; print ">" name > "q.fa"; print s > "q.fa"
                print ">" name > "q-rc.fa"; print rc(s) > "q-rc.fa" }' gen.fq

# edlib-aligner aligns all queries against one target: one run per reference and strand.
awk '/^>/ { f = "ref-" (++n) ".fa"; name[n] = substr($1, 2) } { print > f }
     END { for (i = 1; i <= n; i++) print name[i] > "ref-names" }' refs.fa
: >edlib.tsv
i=0
while read -r ref; do
  i=$((i + 1))
  for strand in + -; do
    qf=q.fa
    [[ $strand == - ]] && qf=q-rc.fa
    "$edlib" -m HW -l "$qf" "ref-$i.fa" |
      awk -v ref="$ref" -v strand="$strand" '/^#[0-9]+:/ {
        q = substr($1, 2) + 0; score = $2; locs = ""
        for (f = 4; f <= NF; f++) locs = locs $f
        gsub(/[][ ]/, "", locs); print q "\t" ref "\t" strand "\t" score "\t" locs }' >>edlib.tsv
  done
done <ref-names
grep '^>' q.fa | cut -c2- >q-names
# Per query: edlib-aligner's best score over references and strands, the (reference, strand) pairs
# reaching it in reference order, + before -, with their locations; compared with weft-align's
# lines for that query (distance, pairs in the same order, (start, end) among the locations).
compare() {
  awk -F'\t' '
    FILENAME == ARGV[1] { ord[$0] = FNR; next }
    FILENAME == ARGV[2] { qname[FNR - 1] = $0; next }
    FILENAME == ARGV[3] {
      q = qname[$1]
      if (!(q in best) || $4 + 0 < best[q]) { best[q] = $4 + 0; delete pairs_of; n[q] = 0; want[q] = "" }
      if ($4 + 0 == best[q]) { key[q, ++n[q]] = sprintf("%05d%s", ord[$2], $3 == "+" ? "a" : "b")
                               val[q, n[q]] = $2 "\t" $3; locs[q, $2, $3] = $5 }
      next }
    { got[$1] = got[$1] $2 "\t" $3 "\n"; dist[$1] = $4
      if (index(locs[$1, $2, $3], "(" $5 "," $6 ")") == 0) { print "query " $1 " on " $2 " " $3 ": (" $5 "," $6 ") is not among edlib-aligner locations " locs[$1, $2, $3]; bad = 1 } }
    END {
      for (q in best) {
        m = n[q]
        for (i = 1; i <= m; i++) { k[i] = key[q, i]; v[i] = val[q, i] }
        for (i = 2; i <= m; i++) for (j = i; j > 1 && k[j - 1] > k[j]; j--) { t = k[j]; k[j] = k[j - 1]; k[j - 1] = t; t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        w = ""; for (i = 1; i <= m; i++) w = w v[i] "\n"
        if (w != got[q]) { printf "query %s: weft-align\n%sedlib-aligner\n%s", q, got[q], w; bad = 1 }
        if (dist[q] != best[q]) { print "query " q ": distance " dist[q] ", edlib-aligner " best[q]; bad = 1 }
        nq++ }
      if (nq == 0) { print "no queries compared"; bad = 1 }
      exit bad }' ref-names q-names edlib.tsv <(grep -v '^#' weft.tsv)
}
for prune in "" --no-prune; do
  "$bin" map --streams 2 --ties all $prune -o weft.tsv refs.fa q.fa
  compare || fail "weft-align $prune differs from edlib-aligner"
done
echo "weft-align vs edlib-aligner: $(wc -l <q-names) queries x $i references, both strands: identical"
