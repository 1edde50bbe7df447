// Package tunnelkeys is the operator's key server for VPN tunnels: it hands each tunnel
// member's sidecar its own private key, and nothing else, once the API server has vouched for
// the pod that asks. Kubernetes mounts a Secret into every pod of a StatefulSet alike, so a
// Secret cannot give each pod a key of its own; a pod's bound service-account token names the
// pod, so the server can.
package tunnelkeys

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/render/vpn"
)

// Path the sidecars POST to.
const Path = "/v1/tunnel-key"

// Extra fields of a bound token's TokenReview that name its pod.
const (
	podNameExtra = "authentication.kubernetes.io/pod-name"
	podUIDExtra  = "authentication.kubernetes.io/pod-uid"
)

// Server answers POST Path with the caller's member key.
type Server struct {
	// Reviewer creates TokenReviews; Reader gets pods, their owners and the keys Secrets
	// (uncached: the server reads a few objects per pod start).
	Reviewer client.Client
	Reader   client.Reader
	Log      logr.Logger
}

// refusal is an answer other than a key: its status and a message for the sidecar's log.
type refusal struct {
	status int
	msg    string
}

func (r *refusal) Error() string { return r.msg }

func refuse(status int, format string, args ...any) error {
	return &refusal{status, fmt.Sprintf(format, args...)}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != Path {
		http.NotFound(w, req)
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST the pod's token", http.StatusMethodNotAllowed)
		return
	}
	key, who, err := s.key(req.Context(), req.Header.Get("Authorization"))
	if err != nil {
		var r *refusal
		if !errors.As(err, &r) {
			r = &refusal{http.StatusServiceUnavailable, "the key server could not read the API: " + err.Error()}
		}
		// Messages name pods and objects, never a token or a key.
		s.Log.Info("refused a tunnel key", "caller", who, "status", r.status, "reason", r.msg)
		http.Error(w, r.msg, r.status)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(key)
	s.Log.V(1).Info("handed a tunnel key", "caller", who)
}

// key authenticates the caller and returns its member's key; who names the caller for logs.
func (s *Server) key(ctx context.Context, authorization string) (key []byte, who string, err error) {
	token, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok || token == "" {
		return nil, "", refuse(http.StatusUnauthorized, "no bearer token: send the pod's token for audience %s", vpn.KeyServerAudience)
	}
	pod, err := s.caller(ctx, token)
	if err != nil {
		return nil, "", err
	}
	who = pod.Namespace + "/" + pod.Name
	datastore, member, err := s.membership(ctx, pod)
	if err != nil {
		return nil, who, err
	}
	sec := &corev1.Secret{}
	name := vpn.KeysSecretName(datastore.Name)
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: name}, sec); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, who, refuse(http.StatusServiceUnavailable, "SecuredDatastore %s has no tunnel keys yet", datastore.Name)
		}
		return nil, who, err
	}
	if !metav1.IsControlledBy(sec, datastore) {
		return nil, who, refuse(http.StatusForbidden, "Secret %s is not SecuredDatastore %s's", name, datastore.Name)
	}
	key = sec.Data[vpn.KeyFile(member)]
	if len(key) == 0 {
		return nil, who, refuse(http.StatusForbidden, "%s is not a member of SecuredDatastore %s's tunnel", member, datastore.Name)
	}
	return key, who + " as " + member, nil
}

// caller is the pod the token was issued to: the API server must accept the token for the key
// server's audience and name a pod that still exists with the same UID.
func (s *Server) caller(ctx context.Context, token string) (*corev1.Pod, error) {
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{vpn.KeyServerAudience}}}
	if err := s.Reviewer.Create(ctx, review); err != nil {
		return nil, fmt.Errorf("reviewing the token: %w", err)
	}
	st := review.Status
	if !st.Authenticated {
		return nil, refuse(http.StatusUnauthorized, "the API server does not accept the token for audience %s", vpn.KeyServerAudience)
	}
	name, uid := one(st.User.Extra[podNameExtra]), one(st.User.Extra[podUIDExtra])
	parts := strings.Split(st.User.Username, ":")
	if name == "" || uid == "" || len(parts) != 4 || parts[0] != "system" || parts[1] != "serviceaccount" {
		return nil, refuse(http.StatusForbidden, "the token is not bound to a pod: use a projected service-account token")
	}
	pod := &corev1.Pod{}
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: parts[2], Name: name}, pod); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, refuse(http.StatusForbidden, "pod %s/%s no longer exists", parts[2], name)
		}
		return nil, err
	}
	if pod.UID != types.UID(uid) {
		return nil, refuse(http.StatusForbidden, "the token was issued to an earlier pod named %s/%s", parts[2], name)
	}
	return pod, nil
}

func one(v authenticationv1.ExtraValue) string {
	if len(v) != 1 {
		return ""
	}
	return v[0]
}

// membership finds the datastore whose tunnel the pod belongs to, and its member name, from
// the pod's controllers alone: a node is a pod of the datastore's StatefulSet and its member
// is the pod's name; a benchmark client is pod i of an indexed Job of a DatastoreBenchmark of
// the datastore, and its member is client-i. Labels, which whoever creates a pod chooses, play
// no part.
func (s *Server) membership(ctx context.Context, pod *corev1.Pod) (*v1alpha1.SecuredDatastore, string, error) {
	owner := metav1.GetControllerOf(pod)
	if owner == nil {
		return nil, "", refuse(http.StatusForbidden, "pod %s has no controller: only datastore nodes and benchmark clients join tunnels", pod.Name)
	}
	switch {
	case owner.APIVersion == "apps/v1" && owner.Kind == "StatefulSet":
		sts := &appsv1.StatefulSet{}
		if err := s.get(ctx, pod.Namespace, owner, sts); err != nil {
			return nil, "", err
		}
		// A StatefulSet names its pods <name>-<ordinal>; no other name is a node's.
		ordinal, ok := strings.CutPrefix(pod.Name, sts.Name+"-")
		if _, err := strconv.ParseUint(ordinal, 10, 31); !ok || err != nil {
			return nil, "", refuse(http.StatusForbidden, "pod %s is not named as StatefulSet %s names its pods", pod.Name, sts.Name)
		}
		ds, err := s.datastore(ctx, sts, metav1.GetControllerOf(sts))
		return ds, pod.Name, err
	case owner.APIVersion == "batch/v1" && owner.Kind == "Job":
		job := &batchv1.Job{}
		if err := s.get(ctx, pod.Namespace, owner, job); err != nil {
			return nil, "", err
		}
		ref := metav1.GetControllerOf(job)
		if ref == nil || ref.APIVersion != v1alpha1.GroupVersion.String() || ref.Kind != "DatastoreBenchmark" {
			return nil, "", refuse(http.StatusForbidden, "Job %s is not a DatastoreBenchmark's", job.Name)
		}
		b := &v1alpha1.DatastoreBenchmark{}
		if err := s.get(ctx, pod.Namespace, ref, b); err != nil {
			return nil, "", err
		}
		if b.Spec.Target.DatastoreRef == nil {
			return nil, "", refuse(http.StatusForbidden, "DatastoreBenchmark %s targets no SecuredDatastore", b.Name)
		}
		ds := &v1alpha1.SecuredDatastore{}
		if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.Target.DatastoreRef.Name}, ds); err != nil {
			return nil, "", notFoundIsForbidden(err, "SecuredDatastore "+b.Spec.Target.DatastoreRef.Name)
		}
		index, err := strconv.Atoi(pod.Annotations[batchv1.JobCompletionIndexAnnotation])
		if err != nil || index < 0 {
			return nil, "", refuse(http.StatusForbidden, "pod %s has no completion index: benchmark Jobs are indexed", pod.Name)
		}
		return ds, fmt.Sprintf("client-%d", index), nil
	}
	return nil, "", refuse(http.StatusForbidden, "pod %s is controlled by a %s: only datastore nodes and benchmark clients join tunnels", pod.Name, owner.Kind)
}

// datastore is the SecuredDatastore that controls sts.
func (s *Server) datastore(ctx context.Context, sts *appsv1.StatefulSet, ref *metav1.OwnerReference) (*v1alpha1.SecuredDatastore, error) {
	if ref == nil || ref.APIVersion != v1alpha1.GroupVersion.String() || ref.Kind != "SecuredDatastore" {
		return nil, refuse(http.StatusForbidden, "StatefulSet %s is not a SecuredDatastore's", sts.Name)
	}
	ds := &v1alpha1.SecuredDatastore{}
	return ds, s.get(ctx, sts.Namespace, ref, ds)
}

// get reads the object ref names and checks that it is the one ref means (same UID).
func (s *Server) get(ctx context.Context, namespace string, ref *metav1.OwnerReference, obj client.Object) error {
	if err := s.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, obj); err != nil {
		return notFoundIsForbidden(err, ref.Kind+" "+ref.Name)
	}
	if obj.GetUID() != ref.UID {
		return refuse(http.StatusForbidden, "%s %s was replaced", ref.Kind, ref.Name)
	}
	return nil
}

func notFoundIsForbidden(err error, what string) error {
	if client.IgnoreNotFound(err) == nil {
		return refuse(http.StatusForbidden, "%s does not exist", what)
	}
	return err
}
