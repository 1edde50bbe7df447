package dataplane

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
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

// KubeletResourceMetrics serves on a loopback address of address's host (port 0 picks one)
// what a kubelet's /metrics/resource serves, with the kernel's figures for real processes
// standing in for containers: containers maps "pod/container" in namespace to a process id,
// and node is the machine as a whole (its series labelled node=<node>, as the scrape
// configuration the operator documents adds). Each value is stamped with the moment it was
// read, as the kubelet stamps its own. It returns the host:port Prometheus should scrape.
func KubeletResourceMetrics(t testing.TB, address, namespace, node string, containers map[string]int) string {
	return KubeletNodeMetrics(t, address, namespace, node, containers, nil)
}

// KubeletNodeMetrics is KubeletResourceMetrics for a node made of nodeProcesses rather than the
// whole machine, so that what the node spends is known exactly whatever else the machine runs.
// A process that ended keeps counting what it used, as a node's or a container's cgroup does.
func KubeletNodeMetrics(t testing.TB, address, namespace, node string, containers map[string]int, nodeProcesses []int) string {
	t.Helper()
	l, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	last := map[int]float64{}
	cpu := func(pid int) float64 {
		mu.Lock()
		defer mu.Unlock()
		if v, err := ReadProcessCPU(pid); err == nil {
			last[pid] = v
		}
		return last[pid]
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		now := time.Now().UnixMilli()
		fmt.Fprintln(w, "# TYPE container_cpu_usage_seconds_total counter")
		for key, pid := range containers {
			pod, container, _ := strings.Cut(key, "/")
			fmt.Fprintf(w, "container_cpu_usage_seconds_total{namespace=%q,pod=%q,container=%q} %g %d\n", namespace, pod, container, cpu(pid), now)
		}
		total := 0.0
		if nodeProcesses == nil {
			total = MachineCPU(t)
		}
		for _, pid := range nodeProcesses {
			total += cpu(pid)
		}
		fmt.Fprintf(w, "# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total{node=%q} %g %d\n", node, total, now)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
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
