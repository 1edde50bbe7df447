package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/placement"
)

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// checkPlacement counts the nodes that can run the datastore under its crypto-acceleration rule
// and says so in PlacementSatisfied; it does not block the other phases (pods would only stay
// Pending, and the condition already says why).
func (r *SecuredDatastoreReconciler) checkPlacement(ctx context.Context, s *datastoreScope) (ctrl.Result, error) {
	ds := s.ds
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing nodes: %w", err)
	}
	qualifying := 0
	for i := range nodes.Items {
		if placement.Qualifies(ds.Spec.Placement, &nodes.Items[i], r.Options.FeatureLabelPrefix) {
			qualifying++
		}
	}
	status, reason, msg := metav1.ConditionTrue, v1alpha1.ReasonNodesQualify, fmt.Sprintf("%d of %d nodes qualify", qualifying, len(nodes.Items))
	if qualifying == 0 {
		status, reason, msg = metav1.ConditionFalse, v1alpha1.ReasonNoNodeQualifies, placement.Explain(ds.Spec.Placement, len(nodes.Items), r.Options.FeatureLabelPrefix)
	}
	if setCondition(&ds.Status.Conditions, ds.Generation, v1alpha1.ConditionPlacementSatisfied, status, reason, msg) && status == metav1.ConditionFalse {
		r.Recorder.Eventf(ds, nil, corev1.EventTypeWarning, reason, "CheckPlacement", "%s", msg)
	}
	return ctrl.Result{}, nil
}

// datastoresForNode re-checks placement when a node's labels change (the crypto labeller, NFD
// or a person hiding features).
func (r *SecuredDatastoreReconciler) datastoresForNode(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1alpha1.SecuredDatastoreList
	if err := r.Client.List(ctx, &list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing datastores after a node change failed")
		return nil
	}
	return requestsFor[v1alpha1.SecuredDatastore](list.Items, nil)
}
