package loopfs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A program that ip netns exec started while the filesystem was mounted holds a copy of every
// mount; Detach must still write the filesystem back and free its loop device, as the
// encrypted-volume tests do while tunnel tests run beside them.
func TestDetachReachesTheImageWhileANetworkNamespaceHoldsACopyOfTheMounts(t *testing.T) {
	fs := Mount(t, 16<<20)
	ns := fmt.Sprintf("sdtloop%d", os.Getpid()%100000)
	run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	copyHolder := exec.Command("ip", "netns", "exec", ns, "sleep", "60")
	if err := copyHolder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = copyHolder.Process.Kill(); _ = copyHolder.Wait() })
	mountinfo := fmt.Sprintf("/proc/%d/mountinfo", copyHolder.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// The copy exists once the program runs in its own mount namespace.
		if b, err := os.ReadFile(mountinfo); err == nil && bytes.Contains(b, []byte(fs.Dir)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ip netns exec did not start a program with a copy of %s", fs.Dir)
		}
	}

	marker := fmt.Sprintf("loopfs-marker-%d", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(fs.Dir, "plain"), []byte(marker), 0o600); err != nil {
		t.Fatal(err)
	}
	loop := fs.loop
	fs.Detach(t)

	image, err := os.ReadFile(fs.Image)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(image, []byte(marker)) {
		t.Error("a file written before Detach is not in the image")
	}
	if held := fs.attachedTo(t); held != "" {
		t.Errorf("%s is still attached after Detach (%s): the other namespace's copy holds the filesystem", loop, held)
	}
	if b, _ := os.ReadFile(mountinfo); bytes.Contains(b, []byte(fs.Dir)) {
		t.Errorf("the other namespace still mounts %s after Detach", fs.Dir)
	}
	fs.Attach(t) // a restart mounts the image again
}
