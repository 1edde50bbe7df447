package hbase

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"secured.dev/operator/api/v1alpha1"
)

// The longest name the CRD accepts renders only valid names: objects, Services (RFC 1035),
// pod host names and the StatefulSet revision label.
func TestLongestAcceptedNameRenders(t *testing.T) {
	ds, enc := sampleDatastore(t)
	ds.Name = "h" + strings.Repeat("x", v1alpha1.MaxHBaseDatastoreName-1)
	objs, err := Build(clusterOf(ds, enc))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs.All() {
		if errs := validation.IsDNS1123Subdomain(o.GetName()); len(errs) > 0 {
			t.Errorf("%s: %v", o.GetName(), errs)
		}
		for k, v := range o.GetLabels() {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("%s label %s: %v", o.GetName(), k, errs)
			}
		}
	}
	for _, svc := range objs.Services {
		if errs := validation.IsDNS1035Label(svc.Name); len(errs) > 0 {
			t.Errorf("Service %s: %v", svc.Name, errs)
		}
	}
	for _, sts := range objs.StatefulSets {
		if errs := validation.IsValidLabelValue(sts.Name + "-0123456789"); len(errs) > 0 {
			t.Errorf("StatefulSet %s: its revision label would be invalid: %v", sts.Name, errs)
		}
		if errs := validation.IsDNS1123Label(sts.Name + "-99"); len(errs) > 0 {
			t.Errorf("StatefulSet %s: its pods' host names would be invalid: %v", sts.Name, errs)
		}
	}
	if got := len(ds.Name) + len("-master-0123456789"); got != validation.LabelValueMaxLength {
		t.Errorf("the limit is not tight: the longest revision label has %d characters", got)
	}
}

// The host a pod's wire identity is checked against is its stable name, and the node
// certificate's wildcard for its role covers it (one label before the wildcard's suffix).
func TestPodHostIsCoveredByTheCertificate(t *testing.T) {
	ds, _ := sampleDatastore(t)
	n := NamesOf(ds)
	names := DNSNames(ds, "cluster.local")
	for _, r := range Roles {
		host := n.PodHost(r, 1, "cluster.local")
		if got := n.Host(n.StatefulSet(r)+"-1", "cluster.local"); got != host {
			t.Errorf("%s: Host %s, PodHost %s", r, got, host)
		}
		covered := false
		for _, w := range names {
			label, rest, _ := strings.Cut(host, ".")
			covered = covered || (label != "" && "*."+rest == w)
		}
		if !covered {
			t.Errorf("%s: %s is not covered by %v", r, host, names)
		}
	}
}
