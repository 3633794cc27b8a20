// SPDX-License-Identifier: Apache-2.0
// weft_fj_go: goroutines, the Go side of the fork-join suite (bench/forkjoin/README.md): the
// same benchmarks as bench/forkjoin/forkjoin.hpp, with the same trees, inputs and spawns, a
// goroutine per spawn and a sync.WaitGroup per frame. Standard library only; bench/run builds it
// with `go build` when Go is installed. Protocol of bench/peer_harness.hpp:
//
//	weft_fj_go --bench=fib|fib-cutoff|nqueens|uts-bin|uts-geo|qsort|msort|empty --n=N
//	           [--streams=S] [--trials=T] [--warmup=W]
//
// prints "raw go BENCH N S SPAWNS NS_TRIAL_1 ..." (tab-separated); a wrong result exits with
// status 1. --streams sets GOMAXPROCS (Go cannot pin its threads).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"
)

// The constants of forkjoin.hpp.
const (
	fibCutoff  = 20
	sortCutoff = 4096
	utsBinM    = 5
	utsBinQ53  = uint64(1) << 53 / 1000 * 198
	utsGeoRoot = 4
	utsSeed    = 19
	sortSeed   = 7
)

// mix is splitmix64's finaliser, the per-node hash.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func fibSerial(n int) int64 {
	if n < 2 {
		return int64(n)
	}
	return fibSerial(n-1) + fibSerial(n-2)
}

// fib spawns fib(n-1), computes fib(n-2) itself, serial below cutoff.
func fib(n, cutoff int) int64 {
	if n < cutoff || n < 2 {
		return fibSerial(n)
	}
	var a int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { a = fib(n-1, cutoff); wg.Done() }()
	b := fib(n-2, cutoff)
	wg.Wait()
	return a + b
}

func fibSpawns(n, cutoff int) int64 {
	s := make([]int64, n+2)
	for k := 2; k <= n; k++ {
		if k >= cutoff {
			s[k] = 1 + s[k-1] + s[k-2]
		}
	}
	return s[n]
}

func fibValue(n int) int64 {
	a, b := int64(0), int64(1)
	for i := 0; i < n; i++ {
		a, b = b, a+b
	}
	return a
}

// board holds the columns and diagonals under attack.
type board struct{ cols, left, right uint32 }

func (b board) free(n int) uint32 { return ^(b.cols | b.left | b.right) & (1<<n - 1) }
func (b board) place(bit uint32) board {
	return board{b.cols | bit, (b.left | bit) << 1, (b.right | bit) >> 1}
}

func nqueens(n, row int, b board) int64 {
	if row == n {
		return 1
	}
	var found [32]int64
	k := 0
	var wg sync.WaitGroup
	for avail := b.free(n); avail != 0; avail &= avail - 1 {
		bit, slot := avail&-avail, k
		k++
		wg.Add(1)
		go func() { found[slot] = nqueens(n, row+1, b.place(bit)); wg.Done() }()
	}
	wg.Wait()
	var sum int64
	for i := 0; i < k; i++ {
		sum += found[i]
	}
	return sum
}

// nqueensReference returns the solutions and the placements, serially.
func nqueensReference(n, row int, b board) (int64, int64) {
	if row == n {
		return 1, 0
	}
	var solutions, placements int64
	for avail := b.free(n); avail != 0; avail &= avail - 1 {
		s, p := nqueensReference(n, row+1, b.place(avail&-avail))
		solutions += s
		placements += p + 1
	}
	return solutions, placements
}

type utsNode struct {
	state uint64
	depth int64
}

func utsChildren(binomial bool, param int64, v utsNode) int {
	u := v.state >> 11
	if binomial {
		if v.depth == 0 {
			return int(param)
		}
		if u < utsBinQ53 {
			return utsBinM
		}
		return 0
	}
	if v.depth >= param {
		return 0
	}
	if v.depth == 0 {
		return utsGeoRoot
	}
	k := 0
	for t := uint64(1) << 53; ; k++ {
		t = t * 4 / 5
		if u >= t {
			return k
		}
	}
}

func utsChild(v utsNode, i int) utsNode {
	return utsNode{mix(v.state ^ (0xd1b54a32d192ed03 * uint64(i+1))), v.depth + 1}
}

func utsRoot() utsNode { return utsNode{mix(utsSeed), 0} }

func uts(binomial bool, param int64, v utsNode) int64 {
	k := utsChildren(binomial, param, v)
	if k == 0 {
		return 1
	}
	below := make([]int64, k)
	var wg sync.WaitGroup
	wg.Add(k)
	for i := 0; i < k; i++ {
		i := i
		go func() { below[i] = uts(binomial, param, utsChild(v, i)); wg.Done() }()
	}
	wg.Wait()
	sum := int64(1)
	for _, b := range below {
		sum += b
	}
	return sum
}

func utsReference(binomial bool, param int64) int64 {
	var nodes int64
	stack := []utsNode{utsRoot()}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nodes++
		for i := utsChildren(binomial, param, v) - 1; i >= 0; i-- {
			stack = append(stack, utsChild(v, i))
		}
	}
	return nodes
}

type u32s []uint32

func (s u32s) Len() int           { return len(s) }
func (s u32s) Less(i, j int) bool { return s[i] < s[j] }
func (s u32s) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }

// partition3 puts the keys below the median-of-three pivot first, then the pivot's, then the
// rest; it returns where the second and third parts start.
func partition3(a []uint32) (int, int) {
	x, y, z := a[0], a[len(a)/2], a[len(a)-1]
	pivot := max32(min32(x, y), min32(max32(x, y), z))
	less := 0
	for i := range a {
		if a[i] < pivot {
			a[i], a[less] = a[less], a[i]
			less++
		}
	}
	more := less
	for i := less; i < len(a); i++ {
		if a[i] == pivot {
			a[i], a[more] = a[more], a[i]
			more++
		}
	}
	return less, more
}

func min32(a, b uint32) uint32 {
	if a < b {
		return a
	}
	return b
}

func max32(a, b uint32) uint32 {
	if a > b {
		return a
	}
	return b
}

// quickSort spawns the lower part and sorts the upper part itself; it returns its spawns.
func quickSort(a []uint32) int64 {
	if len(a) <= sortCutoff {
		sort.Sort(u32s(a))
		return 0
	}
	less, more := partition3(a)
	var left int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { left = quickSort(a[:less]); wg.Done() }()
	right := quickSort(a[more:])
	wg.Wait()
	return 1 + left + right
}

func mergeSerial(a, b, out []uint32) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			out[k] = b[j]
			j++
		} else {
			out[k] = a[i]
			i++
		}
		k++
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
}

// merge splits the longer run at its middle and the other at the same key, spawns the lower
// halves' merge.
func merge(a, b, out []uint32) int64 {
	if len(a)+len(b) <= sortCutoff {
		mergeSerial(a, b, out)
		return 0
	}
	if len(a) < len(b) {
		a, b = b, a
	}
	am := len(a) / 2
	bm := sort.Search(len(b), func(i int) bool { return b[i] >= a[am] })
	var lower int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { lower = merge(a[:am], b[:bm], out); wg.Done() }()
	upper := merge(a[am:], b[bm:], out[am+bm:])
	wg.Wait()
	return 1 + lower + upper
}

// mergeSort leaves a sorted in a (toTmp false) or in tmp (toTmp true).
func mergeSort(a, tmp []uint32, toTmp bool) int64 {
	n := len(a)
	if n <= sortCutoff {
		sort.Sort(u32s(a))
		if toTmp {
			copy(tmp, a)
		}
		return 0
	}
	h := n / 2
	var left int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { left = mergeSort(a[:h], tmp[:h], !toTmp); wg.Done() }()
	right := mergeSort(a[h:], tmp[h:], !toTmp)
	wg.Wait()
	from, to := tmp, a
	if toTmp {
		from, to = a, tmp
	}
	return 1 + left + right + merge(from[:h], from[h:n], to)
}

func checksum(a []uint32) (uint64, uint64) {
	var sum, squares uint64
	for _, x := range a {
		sum += uint64(x)
		squares += uint64(x) * uint64(x)
	}
	return sum, squares
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func skip(bench, why string) {
	fmt.Printf("skip\tgo\t%s\t%s\n", bench, why)
	os.Exit(3)
}

func main() {
	bench := flag.String("bench", "", "fib, fib-cutoff, nqueens, uts-bin, uts-geo, qsort, msort or empty")
	n64 := flag.Int64("n", 0, "the benchmark's size")
	streams := flag.Int("streams", 1, "GOMAXPROCS")
	trials := flag.Int("trials", 10, "timed trials")
	warmup := flag.Int("warmup", 1, "untimed runs first")
	flag.Parse()
	if *n64 < 1 || *streams < 1 || *trials < 1 || *warmup < 0 {
		fmt.Fprintln(os.Stderr, "usage: weft_fj_go --bench=NAME --n=N [--streams=S] [--trials=T] [--warmup=W]")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*streams)
	n := int(*n64)
	setup := func() {}
	var once func() int64 // one trial; returns its spawns
	var check func()      // exits on a wrong result
	switch *bench {
	case "empty":
		once = func() int64 { return 1 }
		check = func() {}
	case "fib", "fib-cutoff":
		if n > 60 {
			skip(*bench, "fib's n is at most 60")
		}
		cutoff := 2
		if *bench == "fib-cutoff" {
			cutoff = fibCutoff
		}
		spawns, want := fibSpawns(n, cutoff), fibValue(n)
		var got int64
		once = func() int64 { got = fib(n, cutoff); return spawns }
		check = func() {
			if got != want {
				fail("%s n=%d: wrong fib: %d, expected %d", *bench, n, got, want)
			}
		}
	case "nqueens":
		if n > 16 {
			skip(*bench, "N-Queens' n is at most 16")
		}
		want, spawns := nqueensReference(n, 0, board{})
		var got int64
		once = func() int64 { got = nqueens(n, 0, board{}); return spawns }
		check = func() {
			if got != want {
				fail("nqueens n=%d: wrong solution count: %d, expected %d", n, got, want)
			}
		}
	case "uts-bin", "uts-geo":
		binomial := *bench == "uts-bin"
		if binomial && n > 1000000 {
			skip(*bench, "the binomial tree's root has at most 10^6 children")
		}
		if !binomial && n > 20 {
			skip(*bench, "the geometric tree's depth is at most 20")
		}
		want := utsReference(binomial, *n64)
		var got int64
		once = func() int64 { got = uts(binomial, *n64, utsRoot()); return want - 1 }
		check = func() {
			if got != want {
				fail("%s n=%d: wrong node count: %d, expected %d", *bench, n, got, want)
			}
		}
	case "qsort", "msort":
		input := make([]uint32, n)
		for i := range input {
			input[i] = uint32(mix(sortSeed+uint64(i)) >> 32)
		}
		wantSum, wantSquares := checksum(input)
		data, tmp := make([]uint32, n), make([]uint32, n)
		setup = func() { copy(data, input) }
		if *bench == "qsort" {
			once = func() int64 { return quickSort(data) }
		} else {
			once = func() int64 { return mergeSort(data, tmp, false) }
		}
		check = func() {
			if !sort.IsSorted(u32s(data)) {
				fail("%s n=%d: not sorted", *bench, n)
			}
			if s, q := checksum(data); s != wantSum || q != wantSquares {
				fail("%s n=%d: checksum (not a permutation of the input)", *bench, n)
			}
		}
	default:
		skip(*bench, "unknown benchmark")
	}
	for i := 0; i < *warmup; i++ {
		setup()
		once()
		check()
	}
	var spawns int64
	line := ""
	for i := 0; i < *trials; i++ {
		setup()
		start := time.Now()
		spawns = once()
		elapsed := time.Since(start).Nanoseconds()
		check()
		line += fmt.Sprintf("\t%d", elapsed)
	}
	if spawns < 1 {
		spawns = 1
	}
	fmt.Printf("raw\tgo\t%s\t%d\t%d\t%d%s\n", *bench, n, *streams, spawns, line)
}
