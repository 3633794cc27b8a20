// SPDX-License-Identifier: Apache-2.0
// weft_peer_go: goroutines, the Go side of bench/'s create/join and context-switch cases. Standard
// library only; bench/run builds it with `go build` when Go is installed. Same protocol as
// bench/peer_harness.hpp:
//
//	weft_peer_go --bench=fanout|chain|yield --n=N [--streams=S] [--trials=T] [--warmup=W]
//
// prints "raw go BENCH N S UNITS NS_TRIAL_1 ..." (tab-separated); weft_bench_collect filters.
// --streams sets GOMAXPROCS (Go cannot pin its threads).
//
//	fanout: main starts N goroutines, then waits for all (sync.WaitGroup)
//	chain:  goroutine k starts goroutine k+1 and waits for it (004's gotim1, with a channel per
//	        level so that every level really waits for its child)
//	yield:  two goroutines call runtime.Gosched() N times each (GOMAXPROCS must be 1)
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

func fanout(n int) int64 {
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() { wg.Done() }()
	}
	wg.Wait()
	return int64(n)
}

func level(left int, done chan struct{}) {
	if left > 1 {
		child := make(chan struct{})
		go level(left-1, child)
		<-child
	}
	close(done)
}

func chain(n int) int64 {
	done := make(chan struct{})
	go level(n, done)
	<-done
	return int64(n)
}

func yieldPair(k int) int64 {
	var wg sync.WaitGroup
	wg.Add(2)
	for j := 0; j < 2; j++ {
		go func() {
			for i := 0; i < k; i++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
	return int64(2 * k)
}

func main() {
	bench := flag.String("bench", "", "fanout, chain or yield")
	n := flag.Int("n", 0, "units (yields per goroutine for yield)")
	streams := flag.Int("streams", 1, "GOMAXPROCS")
	trials := flag.Int("trials", 10, "timed trials")
	warmup := flag.Int("warmup", 1, "untimed runs first")
	flag.Parse()
	if *n < 1 || *streams < 1 || *trials < 1 || *warmup < 0 {
		fmt.Fprintln(os.Stderr, "usage: weft_peer_go --bench=NAME --n=N [--streams=S] [--trials=T] [--warmup=W]")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*streams)
	var once func() int64
	switch *bench {
	case "fanout":
		once = func() int64 { return fanout(*n) }
	case "chain":
		once = func() int64 { return chain(*n) }
	case "yield":
		if *streams != 1 {
			fmt.Printf("skip\tgo\tyield\tone stream only\n")
			os.Exit(3)
		}
		once = func() int64 { return yieldPair(*n) }
	default:
		fmt.Printf("skip\tgo\t%s\tunknown benchmark\n", *bench)
		os.Exit(3)
	}
	for i := 0; i < *warmup; i++ {
		once()
	}
	var units int64
	line := ""
	for i := 0; i < *trials; i++ {
		start := time.Now()
		units = once()
		line += fmt.Sprintf("\t%d", time.Since(start).Nanoseconds())
	}
	fmt.Printf("raw\tgo\t%s\t%d\t%d\t%d%s\n", *bench, *n, *streams, units, line)
}
