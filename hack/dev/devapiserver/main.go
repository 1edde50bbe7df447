// Command devapiserver starts a real kube-apiserver and etcd (the envtest binaries) with this
// operator's CRDs and cert-manager's installed, writes a kubeconfig, and runs until interrupted.
// It is the quickest way to try `kubectl explain`, `kubectl apply` of samples, or `make run`
// without a cluster:
//
//	make dev-apiserver &   # then: export KUBECONFIG=bin/dev-apiserver.kubeconfig
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"secured.dev/operator/internal/test/testenv"
)

func main() {
	kubeconfig := flag.String("write-kubeconfig", "bin/dev-apiserver.kubeconfig", "where to write the kubeconfig")
	flag.Parse()
	e, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["dev"] = &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}
	cfg.AuthInfos["dev"] = &clientcmdapi.AuthInfo{ClientCertificateData: e.Config.CertData, ClientKeyData: e.Config.KeyData}
	cfg.Contexts["dev"] = &clientcmdapi.Context{Cluster: "dev", AuthInfo: "dev"}
	cfg.CurrentContext = "dev"
	err = clientcmd.WriteToFile(*cfg, *kubeconfig)
	if err == nil {
		fmt.Printf("API server at %s; export KUBECONFIG=%s; Ctrl-C stops it\n", e.Config.Host, *kubeconfig)
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
		<-stop
	}
	if stopErr := e.Stop(); stopErr != nil && err == nil {
		err = stopErr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
