package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/shippedprofiles"
)

// ShippedProfilesFieldOwner owns the fields of the shipped profiles, apart from the operator's own
// field owner, so that a user's changes to a shipped profile show up as a conflict in
// managedFields rather than being silently merged.
// The value predates the name: clusters hold it in managedFields, so it stays.
const ShippedProfilesFieldOwner = "secured-datastore-operator-catalogue"

// ShippedProfiles applies the shipped EncryptionProfiles once the operator has started.
//
// The Helm chart cannot create them itself: it installs the CRDs in the same release, and
// Helm maps every object of a release before creating any, so a custom resource whose CRD
// the release brings fails a fresh install. The operator runs after its CRDs exist, applies
// the profiles mounted from the chart's ConfigMap with server-side apply (an upgrade
// updates the profiles in place, never deleting one that datastores refer to) and leaves them
// in place when it is uninstalled.
type ShippedProfiles struct {
	Client client.Client
	Dir    string
}

// +kubebuilder:rbac:groups=datastore.secured.dev,resources=encryptionprofiles,verbs=get;list;watch;create;patch

// Start loads the shipped profiles (failing the manager when it does not parse) and applies it,
// retrying with backoff while the API server refuses.
func (c *ShippedProfiles) Start(ctx context.Context) error {
	profiles, err := shippedprofiles.Load(c.Dir)
	if err != nil {
		return fmt.Errorf("reading the shipped profiles: %w", err)
	}
	logger := log.FromContext(ctx).WithName("shipped-profiles")
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 1 << 30, Cap: time.Minute}
	return wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		if err := ApplyProfiles(ctx, c.Client, profiles); err != nil {
			logger.Error(err, "applying the shipped profiles; retrying")
			return false, nil
		}
		logger.Info("shipped profiles applied", "profiles", len(profiles), "dir", c.Dir)
		return true, nil
	})
}

// ApplyProfiles server-side applies each profile as the shipped profiles' field owner.
func ApplyProfiles(ctx context.Context, c client.Client, profiles []v1alpha1.EncryptionProfile) error {
	for i := range profiles {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&profiles[i])
		if err != nil {
			return err
		}
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		obj := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
		if err := c.Apply(ctx, obj, client.FieldOwner(ShippedProfilesFieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying EncryptionProfile %s: %w", profiles[i].Name, err)
		}
	}
	return nil
}
