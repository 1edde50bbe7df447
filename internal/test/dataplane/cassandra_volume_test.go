package dataplane

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/fscrypt"
	"secured.dev/operator/internal/render/cassandra"
	"secured.dev/operator/internal/test/gobuild"
	"secured.dev/operator/internal/test/loopfs"
)

// The on-disk canary of an encrypted volume, on real Cassandra nodes: two nodes keep their data
// on one ext4 filesystem, one in a directory that the init container's command
// (cmd/volume-encryption) encrypted, the other in a plain one. Markers written through CQL and flushed are on
// the device in clear for the plain node, and nowhere for the encrypted one: not in its
// SSTables, which Cassandra's own encryption at rest leaves in clear, nor in its commit log.
// Once the filesystem is remounted (a node's restart: the kernel has forgotten the key), the
// command refuses another key and, given the right one, lets the node start and read every row
// back.
func TestEncryptedVolumeKeepsCassandraDataOffTheDisk(t *testing.T) {
	withCassandra(t)
	const rows = 200
	fs := loopfs.Mount(t, 1<<30)
	keys := t.TempDir()
	for _, name := range []string{"volume.key", "other.key"} {
		key := make([]byte, fscrypt.KeySize)
		if _, err := rand.Read(key); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(keys, name), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	encrypted, plain := filepath.Join(fs.Dir, "encrypted"), filepath.Join(fs.Dir, "plain")
	if err := os.Mkdir(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	initContainer := func(key string) ([]byte, error) {
		return exec.Command(gobuild.Command(t, "secured.dev/operator/cmd/volume-encryption"), "--dir="+encrypted, "--key="+filepath.Join(keys, key)).CombinedOutput()
	}
	if out, err := initContainer("volume.key"); err != nil {
		t.Fatalf("volume-encryption: %v\n%s", err, out)
	}
	off := v1alpha1.EffectiveChannel{Mode: v1alpha1.ChannelDisabled}
	step := cassandra.Target(v1alpha1.EffectiveEncryption{ClientToNode: off, NodeToNode: off})
	nodes := map[string]*CassandraNode{
		"plain":     StartCassandra(t, Node{Address: "127.0.0.76", JMXPort: 7276, Step: step, DataDir: plain}),
		"encrypted": StartCassandra(t, Node{Address: "127.0.0.77", JMXPort: 7277, Step: step, DataDir: encrypted}),
	}
	markers := map[string]string{}
	for name, n := range nodes {
		markers[name] = Marker(t)
		s := CQLSession(t, nil, n)
		for _, stmt := range []string{
			"CREATE KEYSPACE canary WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			"CREATE TABLE canary.t (k int PRIMARY KEY, v text)",
		} {
			if err := s.Query(stmt).Exec(); err != nil {
				t.Fatalf("%s node: %s: %v", name, stmt, err)
			}
		}
		for i := range rows {
			if err := s.Query("INSERT INTO canary.t (k, v) VALUES (?, ?)", i, fmt.Sprintf("%s-%d", markers[name], i)).Exec(); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := n.Nodetool("flush", "canary"); err != nil {
			t.Fatalf("%s node: nodetool flush: %v\n%s", name, err, out)
		}
		if name == "plain" && len(OnDisk(t, filepath.Join(n.DataDir, "data"), markers[name])) == 0 {
			t.Fatal("the plain node's SSTables do not hold the marker: the canary cannot see a value in clear")
		}
		n.Kill()
	}
	fs.Detach(t) // everything the page cache held reaches the image
	if !OnDevice(t, fs.Image, markers["plain"]) {
		t.Fatal("the plain node's marker is not on the device: the canary cannot see a value in clear")
	}
	if OnDevice(t, fs.Image, markers["encrypted"]) {
		t.Fatal("the encrypted node's marker is on the device in clear")
	}

	fs.Attach(t)
	entries, err := os.ReadDir(encrypted)
	if err != nil || len(entries) == 0 || slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == "data" || e.Name() == "commitlog" }) {
		t.Fatalf("without the key the volume lists %v (%v), want Cassandra's directories under names that tell nothing", entries, err)
	}
	if out, err := initContainer("other.key"); err == nil || !strings.Contains(string(out), "not under the given key") {
		t.Fatalf("volume-encryption with another key: %v\n%s", err, out)
	}
	if out, err := initContainer("volume.key"); err != nil {
		t.Fatalf("volume-encryption after the remount: %v\n%s", err, out)
	}
	n := nodes["encrypted"]
	n.Start(t)
	var count int
	var v string
	s := CQLSession(t, nil, n)
	if err := s.Query("SELECT count(*) FROM canary.t").Consistency(gocql.One).Scan(&count); err != nil || count != rows {
		t.Fatalf("after the remount and the key: %d rows, %v; want %d", count, err, rows)
	}
	if err := s.Query("SELECT v FROM canary.t WHERE k = 7").Scan(&v); err != nil || v != markers["encrypted"]+"-7" {
		t.Fatalf("row 7: %q, %v", v, err)
	}
	t.Logf("%d rows read back from the encrypted volume after a remount", count)
}
