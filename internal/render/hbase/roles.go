package hbase

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"secured.dev/operator/api/v1alpha1"
)

// Role is one kind of process of the cluster; each runs as its own StatefulSet.
//
// RegionServers and DataNodes run in separate pods (the API sizes them separately), placed on
// the same machines where the scheduler can: block reads then stay on one host, as in the
// paper's co-located deployment, without tying the two counts together.
type Role string

const (
	ZooKeeper    Role = "zk"
	NameNode     Role = "nn"
	DataNode     Role = "dn"
	Master       Role = "master"
	RegionServer Role = "rs"
	KDC          Role = "kdc"
)

// Roles of an HBase cluster in start order (the KDC only with Kerberos).
var Roles = []Role{ZooKeeper, NameNode, DataNode, Master, RegionServer}

// Paths in the image (hack/kind/images.sh builds it from Maven Central's jars).
const (
	confDir      = "/etc/hbase/conf"
	libDir       = "/opt/hbase/lib"
	resourcesDir = "/opt/hbase/resources"
	kdcDir       = "/opt/kdc"
	kdcPort      = 8800 // unprivileged in the pod; the Service offers 88
	// HBaseUser runs every process; with simple authentication it is also the HDFS user.
	HBaseUser = 1000
)

// JDK17Options are the module openings HBase 2.6 needs on Java 17 (what bin/hbase adds).
var JDK17Options = []string{
	"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED", "--add-exports=java.base/sun.net.dns=ALL-UNNAMED",
	"--add-exports=java.base/sun.net.util=ALL-UNNAMED", "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
}

// Install is where a process finds its configuration directory, the extra resources HDFS
// needs on the classpath (images/hbase/resources) and the jars; ZooCfg, when set, is the
// zoo.cfg ZooKeeper reads instead of the directory's.
type Install struct{ Conf, Resources, Lib, ZooCfg string }

// PodInstall is the image's layout.
var PodInstall = Install{Conf: confDir, Resources: resourcesDir, Lib: libDir}

// JVM is the java command line of a role on host: heap, Kerberos configuration, module
// openings, classpath (configuration first), main class and arguments.
func JVM(in Install, heapMiB int, kerberized bool, r Role, host string) []string {
	args := []string{"java", fmt.Sprintf("-Xmx%dm", heapMiB), "-Djava.net.preferIPv4Stack=true"}
	if kerberized {
		args = append(args, "-Djava.security.krb5.conf="+in.Conf+"/krb5.conf",
			// ZooKeeper's clients ask for zookeeper/<host as in the quorum list>, not for a
			// name a reverse lookup of its address returns.
			"-Dzookeeper.sasl.client.canonicalize.hostname=false")
		if r == ZooKeeper {
			args = append(args, "-Djava.security.auth.login.config="+in.Conf+"/"+zooKeeperJAAS, "-D"+HostProperty+"="+host)
		}
	}
	args = append(args, JDK17Options...)
	args = append(args, "-cp", in.Conf+":"+in.Resources+":"+in.Lib+"/*", mains[r])
	if r == ZooKeeper {
		cfg := in.ZooCfg
		if cfg == "" {
			cfg = in.Conf + "/zoo.cfg"
		}
		args = append(args, cfg)
	}
	if r == Master || r == RegionServer {
		args = append(args, "start")
	}
	return args
}

var mains = map[Role]string{
	ZooKeeper:    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
	NameNode:     "org.apache.hadoop.hdfs.server.namenode.NameNode",
	DataNode:     "org.apache.hadoop.hdfs.server.datanode.DataNode",
	Master:       "org.apache.hadoop.hbase.master.HMaster",
	RegionServer: "org.apache.hadoop.hbase.regionserver.HRegionServer",
}

var rolePorts = map[Role][]corev1.ContainerPort{
	ZooKeeper:    {{Name: "client", ContainerPort: ZooKeeperPort}, {Name: "peer", ContainerPort: ZooKeeperPeerPort}, {Name: "election", ContainerPort: ZooKeeperElectionPort}},
	NameNode:     {{Name: "rpc", ContainerPort: NameNodePort}, {Name: "http", ContainerPort: NameNodeHTTPPort}, {Name: "https", ContainerPort: NameNodeHTTPSPort}},
	DataNode:     {{Name: "data", ContainerPort: DataNodePort}, {Name: "ipc", ContainerPort: DataNodeIPCPort}, {Name: "http", ContainerPort: DataNodeHTTPPort}, {Name: "https", ContainerPort: DataNodeHTTPSPort}},
	Master:       {{Name: "rpc", ContainerPort: MasterPort}},
	RegionServer: {{Name: "rpc", ContainerPort: RegionServerPort}},
	KDC:          {{Name: "kerberos", ContainerPort: kdcPort}},
}

var heapMiB = map[Role]int{ZooKeeper: 256, NameNode: 512, DataNode: 512, Master: 512, RegionServer: 1024, KDC: 128}

// command runs a role's process; the NameNode formats its volume once, ZooKeeper writes its
// server id from the pod's ordinal. A tunnelled role first takes its tunnel address as its
// name and bind address (tunnelStart); ZooKeeper, whose zoo.cfg cannot read the environment,
// then binds its client port there through a copy of the file.
func command(r Role, enc v1alpha1.EffectiveEncryption, kerberized, tunnelled bool) []string {
	if r == KDC {
		// The image holds Kdc.class, compiled from images/kdc/Kdc.java: a JRE cannot compile.
		return []string{"java", "-Xmx128m", "-cp", kdcDir + "/lib/*:" + kdcDir, "Kdc", "$(REALM)", "0.0.0.0", fmt.Sprint(kdcPort), "/etc/kdc/principals"}
	}
	// The kubelet expands $(HostEnv) from the container's environment; in a tunnel the shell
	// sets it.
	in, host, start := PodInstall, "$("+HostEnv+")", ""
	if tunnelled {
		host, start = `"$`+HostEnv+`"`, tunnelStart
		if r == ZooKeeper {
			in.ZooCfg = "/tmp/zoo.cfg"
			start += `{ cat ` + confDir + `/zoo.cfg && echo "` + ZooKeeperBind(enc, `$`+HostEnv) + `"; } > ` + in.ZooCfg + ` && `
		}
	}
	java := strings.Join(JVM(in, heapMiB[r], kerberized, r, host), " ")
	switch r {
	case ZooKeeper:
		return []string{"sh", "-c", start + `mkdir -p /data/zookeeper && echo $(( ${POD_NAME##*-} + 1 )) > /data/zookeeper/myid && exec ` + java}
	case NameNode:
		format := `[ -f /data/namenode/current/VERSION ] || ` + java + " -format -nonInteractive"
		if tunnelled {
			format = "{ " + format + "; }" // sh's && and || bind alike: after start, group them
		}
		return []string{"sh", "-c", start + format + ` && exec ` + java}
	}
	return []string{"sh", "-c", start + "exec " + java}
}
