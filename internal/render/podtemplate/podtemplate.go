// Package podtemplate holds what every datastore's pod template shares: the restricted
// container security context and the digest of the configuration that rolls the pods.
package podtemplate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// ConfigHashAnnotation on a pod template carries ConfigHash: a change rolls the pods.
const ConfigHashAnnotation = "datastore.secured.dev/config-hash"

// Restricted is the Pod Security Standard "restricted" container context.
func Restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// ConfigHash is a short digest of rendered files and anything else whose change must restart
// the pods (such as the name of the mounted certificate Secret).
func ConfigHash(files map[string]string, extra ...string) string {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%s\x00", k, files[k])
	}
	for _, e := range extra {
		h.Write([]byte(e))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
