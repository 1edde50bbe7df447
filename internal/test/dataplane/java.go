package dataplane

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The source-file launcher (java Foo.java) compiles the program on every start: seconds of
// CPU each time against HBase's 180 jars, and the tests start the smoke client and the KDC
// dozens of times. Each program is compiled once per test binary instead.
var javaClasses = struct {
	sync.Mutex
	root string
	dirs map[string]string // source and classpath -> directory of its classes
}{dirs: map[string]string{}}

// javaMain is a compiled program: its classes before the classpath it was compiled against,
// and its main class.
type javaMain struct{ classpath, class string }

// args are java's arguments that run the program with its arguments.
func (j javaMain) args(arg ...string) []string {
	return append([]string{"-cp", j.classpath, j.class}, arg...)
}

// javaProgram compiles the Java source file src (whose public class is named after the file)
// against classpath, once per test binary.
func javaProgram(t testing.TB, src, classpath string) javaMain {
	t.Helper()
	dir := compiledJava(t, src, classpath)
	return javaMain{classpath: dir + string(filepath.ListSeparator) + classpath, class: strings.TrimSuffix(filepath.Base(src), ".java")}
}

func compiledJava(t testing.TB, src, classpath string) string {
	t.Helper()
	javaClasses.Lock()
	defer javaClasses.Unlock()
	key := src + "\x00" + classpath
	if dir, ok := javaClasses.dirs[key]; ok {
		return dir
	}
	if javaClasses.root == "" {
		root, err := os.MkdirTemp("", "dataplane-classes-")
		if err != nil {
			t.Fatal(err)
		}
		javaClasses.root = root
	}
	dir := filepath.Join(javaClasses.root, strconv.Itoa(len(javaClasses.dirs)))
	if out, err := exec.Command("javac", "-proc:none", "-nowarn", "-d", dir, "-cp", classpath, src).CombinedOutput(); err != nil {
		t.Fatalf("compiling %s: %v\n%s", src, err, out)
	}
	javaClasses.dirs[key] = dir
	return dir
}

// removeCompiledJava deletes what javaProgram compiled; TestMain calls it when every test is done.
func removeCompiledJava() {
	javaClasses.Lock()
	defer javaClasses.Unlock()
	if javaClasses.root != "" {
		_ = os.RemoveAll(javaClasses.root)
	}
}

// quickJVM: every JVM the tests start takes the C1 compiler alone and, where the process does
// not choose its collector, the serial one (the pods' options stay as rendered). These JVMs live
// for seconds to minutes, so start-up is most of their CPU: with C1 alone an HBase cluster came up
// in 26-33 s instead of 34-46 s on two cores, where C2's compilations and G1's threads take CPU
// from the processes under test.
// A benchmark (go test -bench) measures the JVM as the pods run it, so TestMain turns this off.
var quickJVM = true

const (
	quickJIT = "-XX:TieredStopAtLevel=1"
	quickGC  = "-XX:+UseSerialGC"
)

// keepJVMDefaultsWhenBenchmarking turns quickJVM off under go test -bench.
func keepJVMDefaultsWhenBenchmarking() {
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		quickJVM = false
	}
}

// java is the command that runs a JVM with args, quick unless benchmarking.
func java(ctx context.Context, args ...string) *exec.Cmd {
	if quickJVM {
		args = append([]string{quickJIT, quickGC}, args...)
	}
	return exec.CommandContext(ctx, "java", args...)
}
