package controllers

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/test/samples"
)

// The shipped profiles reach the API server through the operator, as the chart installs
// it: every profile applied under the shipped profiles' field owner, and a changed manifest (a chart
// upgrade) updates the profile in place.
func TestShippedProfilesIsAppliedAndUpdatedInPlace(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, name := range []string{"plaintext.yaml", "tls13-chacha20.yaml"} {
		data, err := os.ReadFile(filepath.Join(samples.ProfilesDir(), name))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(os.WriteFile(filepath.Join(dir, name), data, 0o600)).To(Succeed())
	}
	cat := &ShippedProfiles{Client: env.Client, Dir: dir}
	g.Expect(cat.Start(ctx)).To(Succeed())
	t.Cleanup(func() {
		for _, n := range []string{"plaintext", "tls13-chacha20"} {
			_ = env.Client.Delete(context.Background(), &v1alpha1.EncryptionProfile{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
	})
	p := &v1alpha1.EncryptionProfile{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "tls13-chacha20"}, p)).To(Succeed())
	g.Expect(p.Spec.ClientToNode.TLS.CipherSuites).To(Equal([]v1alpha1.CipherSuite{"TLS_CHACHA20_POLY1305_SHA256"}))
	g.Expect(slices.ContainsFunc(p.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Manager == ShippedProfilesFieldOwner })).To(BeTrue())
	uid := p.UID

	data, err := os.ReadFile(filepath.Join(dir, "tls13-chacha20.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	edited := strings.Replace(string(data), "description: >-\n", "description: >-\n    Edited by an upgrade.\n", 1)
	g.Expect(edited).NotTo(Equal(string(data)), "the sample has a folded description to edit")
	g.Expect(os.WriteFile(filepath.Join(dir, "tls13-chacha20.yaml"), []byte(edited), 0o600)).To(Succeed())
	g.Expect(cat.Start(ctx)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "tls13-chacha20"}, p)).To(Succeed())
	g.Expect(p.Spec.Description).To(HavePrefix("Edited by an upgrade."))
	g.Expect(p.UID).To(Equal(uid), "updated in place, not deleted and created again")
}

// A shipped profile that does not parse stops the operator with the file's name, rather than
// leaving the cluster without some profiles.
func TestShippedProfilesThatDoesNotParseIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("apiVersion: datastore.secured.dev/v1alpha1\nkind: EncryptionProfile\nmetadata: {name: broken}\nspec: {bogus: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := (&ShippedProfiles{Client: env.Client, Dir: dir}).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "broken.yaml") || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("err = %v; want the file and the unknown field named", err)
	}
}
