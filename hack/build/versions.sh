# Versions of everything hack/ builds, in one place. Sourced by the build scripts; the wrapper
# modules' go.mod files must require the same versions (the scripts check).
KUBE_VERSION=v1.36.3    # hack/build/kube/go.mod
ETCD_VERSION=v3.6.8     # hack/build/etcd/go.mod; the etcd line Kubernetes v1.36.3 pins
ETCD_IMAGE_TAG=3.6.8-0  # what kubeadm v1.36 expects
COREDNS_VERSION=v1.14.2 # hack/build/coredns/go.mod; what kubeadm v1.36 expects
PAUSE_TAG=3.10.2        # what kubeadm v1.36 expects; the binary is ours (hack/kind/pause)
CERT_MANAGER_VERSION=v1.11.5              # hack/build/cert-manager/go.mod; the newest the wrapper builds offline
LOCAL_PATH_PROVISIONER_VERSION=v0.0.30  # hack/build/local-path-provisioner/go.mod
KIND_VERSION=v0.33.0
HELM_VERSION=v3.22.0
LATTE_VERSION=0.29.0     # latte-cli from crates.io, the CQL load tool make bench-client measures our client against
CHECKOV_VERSION=3.3.30   # hack/build/checkov-requirements.txt pins it and its dependencies (PyPI)
K8S_IMAGE_REPO=secured.dev/k8s
