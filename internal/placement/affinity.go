package placement

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"secured.dev/operator/api/v1alpha1"
)

// DefaultFeatures are what "crypto acceleration" means when a datastore lists none.
var DefaultFeatures = []v1alpha1.CPUFeature{"AESNI"}

func features(p *v1alpha1.PlacementSpec) []v1alpha1.CPUFeature {
	if p == nil || len(p.Features) == 0 {
		return DefaultFeatures
	}
	return p.Features
}

func mode(p *v1alpha1.PlacementSpec) v1alpha1.CryptoAcceleration {
	if p == nil || p.CryptoAcceleration == "" {
		return v1alpha1.AccelerationAny
	}
	return p.CryptoAcceleration
}

// The functions below take the feature label prefix the cluster uses (the operator's
// --feature-label-prefix); empty means Node Feature Discovery's.
func orDefault(prefix string) string {
	if prefix == "" {
		return LabelPrefix
	}
	return prefix
}

// Affinity turns the placement rule into node affinity on the feature labels: Required and
// Preferred ask for every feature, Forbidden for none of them (a node whose features a person
// hid has no labels for them, so it qualifies, and says so in its hidden-features label).
func Affinity(p *v1alpha1.PlacementSpec, prefix string) *corev1.Affinity {
	prefix = orDefault(prefix)
	var exprs []corev1.NodeSelectorRequirement
	for _, f := range features(p) {
		req := corev1.NodeSelectorRequirement{Key: prefix + string(f), Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}}
		if mode(p) == v1alpha1.AccelerationForbidden {
			req = corev1.NodeSelectorRequirement{Key: prefix + string(f), Operator: corev1.NodeSelectorOpDoesNotExist}
		}
		exprs = append(exprs, req)
	}
	term := corev1.NodeSelectorTerm{MatchExpressions: exprs}
	switch mode(p) {
	case v1alpha1.AccelerationRequired, v1alpha1.AccelerationForbidden:
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}},
		}}
	case v1alpha1.AccelerationPreferred:
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: term}},
		}}
	}
	return nil
}

// Qualifies reports whether a node can run the datastore's pods under the hard rules: the
// placement's nodeSelector and, for Required and Forbidden, the feature labels.
func Qualifies(p *v1alpha1.PlacementSpec, node *corev1.Node, prefix string) bool {
	prefix = orDefault(prefix)
	if p != nil {
		for k, v := range p.NodeSelector {
			if node.Labels[k] != v {
				return false
			}
		}
	}
	for _, f := range features(p) {
		has := node.Labels[prefix+string(f)] == "true"
		switch mode(p) {
		case v1alpha1.AccelerationRequired:
			if !has {
				return false
			}
		case v1alpha1.AccelerationForbidden:
			if has {
				return false
			}
		}
	}
	return true
}

// Explain says, for a condition message, why no node qualifies and what to do.
func Explain(p *v1alpha1.PlacementSpec, nodes int, prefix string) string {
	prefix = orDefault(prefix)
	var labels []string
	for _, f := range features(p) {
		labels = append(labels, prefix+string(f))
	}
	slices.Sort(labels)
	switch mode(p) {
	case v1alpha1.AccelerationRequired:
		return fmt.Sprintf("none of %d nodes has %s=true: install Node Feature Discovery or the crypto labeller, or set spec.placement.cryptoAcceleration to Preferred",
			nodes, strings.Join(labels, ", "))
	case v1alpha1.AccelerationForbidden:
		return fmt.Sprintf("every one of %d nodes has %s: hide features on some nodes with the label %s (e.g. AESNI.VAES), or set spec.placement.emulateNoAcceleration instead",
			nodes, strings.Join(labels, " or "), HideFeaturesLabel)
	}
	return fmt.Sprintf("none of %d nodes matches spec.placement.nodeSelector", nodes)
}
