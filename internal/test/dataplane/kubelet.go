package dataplane

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// userHZ is the unit of /proc's CPU times on every Linux architecture we run on.
const userHZ = 100

// ProcessCPU is the kernel's account of a process: its user plus system time, in seconds.
func ProcessCPU(t testing.TB, pid int) float64 {
	cpu, err := ReadProcessCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	return cpu
}

// ReadProcessCPU is ProcessCPU for callers that outlive the process, such as a sampler
// running beside it: a process that has exited is an error, not a failed test.
func ReadProcessCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / userHZ, nil
}

// MachineCPU is the kernel's account of the whole machine: every CPU's busy time, in seconds.
func MachineCPU(t testing.TB) float64 {
	cpu, err := ReadMachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	return cpu
}

// ReadMachineCPU is MachineCPU for a goroutine that cannot fail a test.
func ReadMachineCPU() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	var busy float64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		x, _ := strconv.ParseFloat(v, 64)
		busy += x
	}
	return busy / userHZ, nil
}

// Kubelet stands in for a kubelet's /metrics/resource and keeps every value it served, so a
// test can compare an account with what the kernel said at the moments the account saw.
type Kubelet struct {
	// Address is the host:port Prometheus should scrape.
	Address string
	mu      sync.Mutex
	served  map[int][]CPUSample
}

// CPUSample is the kernel's account of a process (user plus system CPU-seconds) when a scrape
// read it.
type CPUSample struct {
	T   time.Time
	CPU float64
}

// Served is what the stand-in served for pid between from and to, in time order.
func (k *Kubelet) Served(pid int, from, to time.Time) []CPUSample {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []CPUSample
	for _, s := range k.served[pid] {
		if !s.T.Before(from) && !s.T.After(to) {
			out = append(out, s)
		}
	}
	return out
}

// Rate is the kernel's CPU rate of pid (cores) between the first and the last sample it served
// inside [from, to], and the time they span: a window's usage as far as a kubelet's samples can
// know it, whatever the process got from a loaded machine before or after them.
func (k *Kubelet) Rate(t testing.TB, pid int, from, to time.Time) (float64, time.Duration) {
	t.Helper()
	in := k.Served(pid, from, to)
	if len(in) < 2 {
		t.Fatalf("the stand-in kubelet served %d samples of process %d in %s..%s", len(in), pid, from.Format(time.StampMilli), to.Format(time.StampMilli))
	}
	first, last := in[0], in[len(in)-1]
	span := last.T.Sub(first.T)
	return (last.CPU - first.CPU) / span.Seconds(), span
}

// CPUAt is the kernel's account of pid at a moment, interpolated between the samples served
// around it (the first or last one outside them).
func (k *Kubelet) CPUAt(pid int, at time.Time) float64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	all := k.served[pid]
	i, _ := slices.BinarySearchFunc(all, at, func(s CPUSample, at time.Time) int { return s.T.Compare(at) })
	switch {
	case len(all) == 0:
		return 0
	case i == 0:
		return all[0].CPU
	case i == len(all):
		return all[i-1].CPU
	}
	a, b := all[i-1], all[i]
	if !b.T.After(a.T) {
		return b.CPU
	}
	return a.CPU + (b.CPU-a.CPU)*at.Sub(a.T).Seconds()/b.T.Sub(a.T).Seconds()
}

// KubeletResourceMetrics serves on a loopback address of address's host (port 0 picks one)
// what a kubelet's /metrics/resource serves, with the kernel's figures for real processes
// standing in for containers: containers maps "pod/container" in namespace to a process id,
// and node is the machine as a whole (its series labelled node=<node>, as the scrape
// configuration the operator documents adds). Each value is stamped with the moment it was
// read, as the kubelet stamps its own.
func KubeletResourceMetrics(t testing.TB, address, namespace, node string, containers map[string]int) *Kubelet {
	return KubeletNodeMetrics(t, address, namespace, node, containers, nil)
}

// KubeletNodeMetrics is KubeletResourceMetrics for a node made of nodeProcesses rather than the
// whole machine, so that what the node spends is known exactly whatever else the machine runs.
// A process that ended keeps counting what it used, as a node's or a container's cgroup does.
func KubeletNodeMetrics(t testing.TB, address, namespace, node string, containers map[string]int, nodeProcesses []int) *Kubelet {
	t.Helper()
	l, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	k := &Kubelet{Address: l.Addr().String(), served: map[int][]CPUSample{}}
	last := map[int]float64{}
	cpu := func(pid int, at time.Time) float64 {
		k.mu.Lock()
		defer k.mu.Unlock()
		if v, err := ReadProcessCPU(pid); err == nil {
			last[pid] = v
		}
		k.served[pid] = append(k.served[pid], CPUSample{T: at, CPU: last[pid]})
		return last[pid]
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		at := time.UnixMilli(time.Now().UnixMilli()) // the stamp Prometheus stores
		fmt.Fprintln(w, "# TYPE container_cpu_usage_seconds_total counter")
		for key, pid := range containers {
			pod, container, _ := strings.Cut(key, "/")
			fmt.Fprintf(w, "container_cpu_usage_seconds_total{namespace=%q,pod=%q,container=%q} %g %d\n", namespace, pod, container, cpu(pid, at), at.UnixMilli())
		}
		total := 0.0
		if nodeProcesses == nil {
			total = MachineCPU(t)
		}
		for _, pid := range nodeProcesses {
			total += cpu(pid, at)
		}
		fmt.Fprintf(w, "# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total{node=%q} %g %d\n", node, total, at.UnixMilli())
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return k
}

// StartProcess runs a program until the test ends and returns its process id.
func StartProcess(t testing.TB, args ...string) int {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}
