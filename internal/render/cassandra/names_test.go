package cassandra

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"secured.dev/operator/api/v1alpha1"
)

// The longest name the CRD accepts renders only valid names: objects, Services (RFC 1035),
// pod host names and the StatefulSet revision label.
func TestLongestAcceptedNameRenders(t *testing.T) {
	for _, file := range []string{"secureddatastore-cassandra-tls13.yaml", "secureddatastore-cassandra-wireguard.yaml"} {
		ds, enc := sampleDatastore(t, file)
		ds.Name = "c" + strings.Repeat("x", v1alpha1.MaxCassandraDatastoreName-1)
		objs := build(t, ds, enc)
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
		for _, svc := range []string{objs.ClientService.Name, objs.HeadlessService.Name} {
			if errs := validation.IsDNS1035Label(svc); len(errs) > 0 {
				t.Errorf("Service %s: %v", svc, errs)
			}
		}
		if errs := validation.IsValidLabelValue(objs.StatefulSet.Name + "-0123456789"); len(errs) > 0 {
			t.Errorf("the StatefulSet's revision label would be invalid: %v", errs)
		}
		if got := len(objs.StatefulSet.Name + "-0123456789"); got != validation.LabelValueMaxLength {
			t.Errorf("the limit is not tight: the revision label has %d characters", got)
		}
	}
}
