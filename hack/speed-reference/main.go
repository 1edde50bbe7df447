// Command speed-reference times two fixed pieces of work, again and again, in CPU time: how
// fast the machine runs a thread right now. Run beside a study, it records what the study's
// runs cannot separate from TLS: the host lending the VM more or less speed (a busy hyperthread
// sibling, a neighbour evicting the caches, a clock change). hack/kind/speed-adjust.py then
// asks whether each run's server CPU per operation moves with it.
//
// Every -every it runs one unit of each kind on a locked OS thread and reads the thread's CPU
// clock around it, so time the thread spent descheduled does not count; every second it prints
// the mean CPU-nanoseconds per unit:
//
//	unix-seconds  compute-ns  memory-ns  units
//
// compute hashes 16 KiB (SHA-256, in the L1 and L2 caches); memory follows a random cycle of
// pointers through 16 MiB (past the L2, into the shared L3 and memory), where a neighbour's cache
// traffic shows. It stops by itself after -for.
package main

import (
	"bufio"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	every := flag.Duration("every", 20*time.Millisecond, "how often to run one unit of each kind")
	run := flag.Duration("for", 30*time.Minute, "how long to run before stopping")
	flag.Parse()
	if *every <= 0 || *run <= 0 {
		fmt.Fprintln(os.Stderr, "speed-reference: -every and -for must be positive")
		os.Exit(2)
	}
	runtime.LockOSThread()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()

	buf := make([]byte, 16<<10)
	ring := cycle(16<<20/8, 1)
	var compute, memory time.Duration
	units, at := 0, 0
	stop := time.Now().Add(*run)
	second := time.Now().Truncate(time.Second).Add(time.Second)
	for now := time.Now(); now.Before(stop); now = time.Now() {
		if !now.Before(second) {
			if units > 0 {
				fmt.Fprintf(out, "%d\t%.0f\t%.0f\t%d\n", second.Unix()-1, float64(compute)/float64(units), float64(memory)/float64(units), units)
				out.Flush()
			}
			compute, memory, units = 0, 0, 0
			second = now.Truncate(time.Second).Add(time.Second)
		}
		t0 := threadCPU()
		for range 4 {
			sum := sha256.Sum256(buf)
			buf[0] = sum[0]
		}
		t1 := threadCPU()
		for range 1024 {
			at = ring[at]
		}
		t2 := threadCPU()
		compute, memory, units = compute+t1-t0, memory+t2-t1, units+1
		time.Sleep(*every)
	}
	if at < 0 { // keeps the chase from being optimised away
		fmt.Println(at)
	}
}

// cycle is a random cyclic permutation of n slots (Sattolo's algorithm): following it from
// any slot visits every slot once, in an order the prefetcher cannot guess.
func cycle(n int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, seed))
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		fmt.Fprintln(os.Stderr, "speed-reference: no thread CPU clock:", err)
		os.Exit(1)
	}
	return time.Duration(ts.Nano())
}
