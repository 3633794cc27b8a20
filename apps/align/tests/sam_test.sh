#!/usr/bin/env bash
# weft-align's SAM, BAM and PAF output against samtools. Usage: sam_test.sh PATH/TO/weft-align
# PATH/TO/samtools. Reads cut from two seeded references with known edits (a substitution, an
# insertion, a deletion, reverse-complemented reads with and without an edit, a read that maps
# nowhere) are mapped under --match literal; the SAM must pass samtools quickcheck, read back
# through samtools view unchanged, and each NM must equal what samtools calmd computes from the
# record's POS, CIGAR and SEQ against the reference (so a wrong position, CIGAR or strand fails).
# SPDX-License-Identifier: Apache-2.0
set -euo pipefail
bin=$1
samtools=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" gen --seed 5 --refs 2 --ref-min 300 --ref-max 300 --queries 1 --ref-out gen.fa \
  --query-out unused.fa
# One line per reference, for awk's substr (1-based).
awk '/^>/ { if (s != "") print s; print $1; s = ""; next } { s = s $0 } END { print s }' gen.fa >refs.fa
s1=$(sed -n 2p refs.fa)
s2=$(sed -n 4p refs.fa)
[[ ${#s1} == 300 && ${#s2} == 300 ]] || fail "references are not 300 residues"
rc() { rev <<<"$1" | tr ACGT TGCA; }
other() { case $1 in A) echo C ;; C) echo G ;; G) echo T ;; *) echo A ;; esac; }
sub=${s1:100:60}
sub=${sub:0:29}$(other "${sub:29:1}")${sub:30}
# name, sequence, expected flag, expected 1-based POS (0: not checked), expected NM
cat >cases.tsv <<CASES
exact	${s1:50:60}	0	51	0
sub	${sub}	0	101	1
ins	${s2:20:15}GTA${s2:35:15}	0	21	3
del	${s2:150:15}${s2:168:15}	0	151	3
rev	$(rc "${s2:230:60}")	16	231	0
revdel	$(rc "${s1:200:25}${s1:227:25}")	16	201	2
none	ACACACACACACACACACACACACACACACACACACACACACAC	4	0	-
CASES
awk -F'\t' '{ print ">" $1; print $2 }' cases.tsv >q.fa

"$bin" map --streams 1 --match literal --max-dist 10 --format sam -o out.sam refs.fa q.fa
"$samtools" quickcheck -v out.sam || fail "samtools quickcheck rejects the SAM"
# htslib's own formatting: samtools reads it back and writes the same text.
"$samtools" view -h --no-PG out.sam >back.sam || fail "samtools view cannot read the SAM"
cmp -s out.sam back.sam || { diff out.sam back.sam >&2; fail "samtools view changes the SAM"; }
"$samtools" view -b --no-PG -o out.bam out.sam || fail "samtools cannot convert the SAM to BAM"
[[ $("$samtools" view -c out.bam) == 7 ]] || fail "BAM: expected 7 records"

grep -q $'^@HD\tVN:1.6' out.sam || fail "no @HD line"
grep -q $'^@SQ\tSN:ref0\tLN:300$' out.sam || fail "no @SQ line for ref0 with its length"
grep -q $'^@SQ\tSN:ref1\tLN:300$' out.sam || fail "no @SQ line for ref1 with its length"
grep -q $'^@PG\tID:weft-align\tPN:weft-align\tVN:[0-9.]*\tCL:weft-align map .*--match literal .*--format sam' out.sam ||
  fail "no @PG line with the command line"
grep -q $'^@CO\tmatch: literal' out.sam || fail "no @CO line naming the matching rule"

# Flags, positions, NM, CIGAR lengths, SEQ and QUAL against the cases.
"$samtools" view out.sam | awk -F'\t' '
  FNR == NR { flag[$1] = $3; pos[$1] = $4; nm[$1] = $5; seq[$1] = $2; n++; next }
  function rc(s,   r, i, c) { r = ""; for (i = length(s); i >= 1; i--) { c = substr(s, i, 1)
      r = r (c == "A" ? "T" : c == "C" ? "G" : c == "G" ? "C" : "A") } return r }
  { seen++
    if ($2 != flag[$1]) { print $1 ": flag " $2 ", expected " flag[$1]; bad = 1 }
    if (pos[$1] && $4 != pos[$1]) { print $1 ": POS " $4 ", expected " pos[$1]; bad = 1 }
    want = int($2 / 16) % 2 ? rc(seq[$1]) : seq[$1]
    if ($10 != want) { print $1 ": SEQ " $10 ", expected " want; bad = 1 }
    if ($11 != "*") { print $1 ": QUAL " $11 " from FASTA"; bad = 1 }
    if (int($2 / 4) % 2) {
      if ($3 != "*" || $6 != "*") { print $1 ": unmapped with RNAME " $3 " CIGAR " $6; bad = 1 }
      next }
    if ($5 != 255) { print $1 ": MAPQ " $5; bad = 1 }
    if ($6 !~ /^([0-9]+[=XID])+$/) { print $1 ": CIGAR " $6 " is not =/X/I/D"; bad = 1 }
    tag = ""; for (f = 12; f <= NF; f++) if ($f ~ /^NM:i:/) tag = substr($f, 6)
    if (tag != nm[$1]) { print $1 ": NM " tag ", expected " nm[$1]; bad = 1 } }
  END { if (seen != n) { print seen " records for " n " queries"; bad = 1 }; exit bad }' \
  cases.tsv - || fail "records differ from the known answers"

# NM against samtools calmd: it recomputes NM (and MD) from POS, CIGAR, SEQ and the reference.
"$samtools" calmd out.sam refs.fa 2>calmd.err >calmd.sam || { cat calmd.err >&2; fail "samtools calmd"; }
nm_of() { "$samtools" view "$1" | awk -F'\t' 'int($2 / 4) % 2 == 0 {
  for (f = 12; f <= NF; f++) if ($f ~ /^NM:i:/) print $1 "\t" substr($f, 6) }' | sort; }
nm_of out.sam >ours.nm
nm_of calmd.sam >calmd.nm
[[ $(wc -l <ours.nm) == 6 ]] || fail "expected 6 mapped records with NM"
cmp -s ours.nm calmd.nm || { diff ours.nm calmd.nm >&2; fail "NM differs from samtools calmd"; }

# FASTQ input: QUAL is kept, reversed with the sequence on the reverse strand.
awk -F'\t' '{ q = ""; for (i = 1; i <= length($2); i++) q = q sprintf("%c", 33 + i % 40)
  print "@" $1; print $2; print "+"; print q }' cases.tsv >q.fq
"$bin" map --streams 1 --match literal --max-dist 10 --format sam -o fq.sam refs.fa q.fq
"$samtools" quickcheck fq.sam || fail "FASTQ: quickcheck"
"$samtools" view fq.sam | awk -F'\t' '
  FNR == NR { if (FNR % 4 == 1) name = substr($0, 2); if (FNR % 4 == 0) qual[name] = $0; next }
  function rev(s,   r, i) { r = ""; for (i = length(s); i >= 1; i--) r = r substr(s, i, 1); return r }
  { want = int($2 / 16) % 2 ? rev(qual[$1]) : qual[$1]
    if ($11 != want) { print $1 ": QUAL " $11 ", expected " want; bad = 1 } }
  END { exit bad }' q.fq - || fail "FASTQ qualities"

# --ties all: a second reference with the same sequence gives a secondary record (flag 256).
printf '>copy\n%s\n' "$s1" >dup.fa
cat refs.fa dup.fa >refs-dup.fa
"$bin" map --streams 1 --match literal --ties all --strand forward --format sam -o ties.sam \
  refs-dup.fa <(printf '>exact\n%s\n' "${s1:50:60}")
[[ $("$samtools" view ties.sam | cut -f1-4 | tr '\t' ' ') == "exact 0 ref0 51"$'\n'"exact 256 copy 51" ]] ||
  fail "--ties all: expected a primary and a secondary record"

# PAF: the known answer of the substitution and reverse-deletion reads, columns and tags.
"$bin" map --streams 1 --match literal --max-dist 10 --format paf -o out.paf refs.fa q.fa
grep -q '^none' out.paf && fail "PAF: a query without a hit is written"
[[ $(wc -l <out.paf) == 6 ]] || fail "PAF: expected 6 lines"
want_sub=$'sub\t60\t0\t60\t+\tref0\t300\t100\t160\t59\t60\t255\tNM:i:1\tcg:Z:29=1X30='
[[ $(grep '^sub' out.paf) == "$want_sub" ]] || fail "PAF sub: $(grep '^sub' out.paf)"
want_rev=$'rev\t60\t0\t60\t-\tref1\t300\t230\t290\t60\t60\t255\tNM:i:0\tcg:Z:60='
[[ $(grep '^rev	' out.paf) == "$want_rev" ]] || fail "PAF rev: $(grep '^rev	' out.paf)"
# Every line: 14 fields; matches + mismatches + indels = block length; target span = = + X + D.
awk -F'\t' '{ if (NF != 14) { print $1 ": " NF " fields"; bad = 1 }
  c = substr($14, 6); m = x = i = d = 0
  while (match(c, /^[0-9]+[=XID]/)) { n = substr(c, 1, RLENGTH - 1) + 0; op = substr(c, RLENGTH, 1)
    if (op == "=") m += n; else if (op == "X") x += n; else if (op == "I") i += n; else d += n
    c = substr(c, RLENGTH + 1) }
  if (c != "") { print $1 ": bad cg " $14; bad = 1 }
  if ($10 != m || $11 != m + x + i + d || $9 - $8 != m + x + d || $4 - $3 != m + x + i) {
    print $1 ": columns disagree with " $14; bad = 1 }
  if ("NM:i:" (x + i + d) != $13) { print $1 ": " $13 " but the CIGAR has " x + i + d " edits"; bad = 1 } }
  END { exit bad }' out.paf || fail "PAF columns"

# BAM: the same header and records as the SAM, to a file and to a pipe.
"$bin" map --streams 1 --match literal --max-dist 10 --format bam -o out.bam refs.fa q.fa
"$samtools" quickcheck -v out.bam || fail "samtools quickcheck rejects the BAM"
[[ $(head -c 4 <(gzip -dc out.bam)) == BAM$'\001' ]] || fail "out.bam is not BGZF-compressed BAM"
"$samtools" view -h --no-PG out.bam >bam.sam || fail "samtools view cannot read the BAM"
diff <(grep -v '^@PG' bam.sam) <(grep -v '^@PG' out.sam) >&2 ||
  fail "the BAM holds other records than the SAM"
"$bin" map --streams 1 --match literal --max-dist 10 --format bam refs.fa q.fa |
  "$samtools" view -h --no-PG - >pipe.sam
diff <(grep -v '^@PG' pipe.sam) <(grep -v '^@PG' out.sam) >/dev/null || fail "BAM on stdout differs"
# SAM and BAM need nucleotide codes.
set +e
"$bin" map --format bam --alphabet ACGTZ --strand forward refs.fa q.fa >/dev/null 2>alpha.err
rc=$?
set -e
[[ $rc == 2 ]] || fail "--format bam with Z in the alphabet: exit status $rc"
grep -q "option --format bam: 'Z' of the alphabet is not a SAM nucleotide code" alpha.err ||
  fail "--format bam with Z in the alphabet: $(cat alpha.err)"

# Bad format names are a usage error.
set +e
"$bin" map --format cram refs.fa q.fa >/dev/null 2>bad.err
rc=$?
set -e
[[ $rc == 2 ]] || fail "--format cram: exit status $rc"
grep -q "option --format: expected one of tsv, sam, bam, paf, got 'cram'" bad.err || fail "--format cram: $(cat bad.err)"
echo "weft-align SAM/PAF: all checks passed"
