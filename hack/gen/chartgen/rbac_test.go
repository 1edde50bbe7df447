package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"secured.dev/operator/internal/test/chart"
	"secured.dev/operator/internal/test/tier"
)

// grant is one rule as bound to a subject: where it applies ("" is cluster-wide).
type grant struct {
	role      string
	namespace string
	subject   string
	rule      rbacv1.PolicyRule
}

func (g grant) String() string {
	where := "cluster-wide"
	if g.namespace != "" {
		where = "in " + g.namespace
	}
	return fmt.Sprintf("%s (%s, %s): groups %v resources %v%v verbs %v", g.role, g.subject, where, g.rule.APIGroups, g.rule.Resources, g.rule.NonResourceURLs, g.rule.Verbs)
}

// grants resolves every binding of the rendered chart to the rules it grants.
func grants(t *testing.T, objs map[string][]unstructured.Unstructured) []grant {
	t.Helper()
	clusterRoles := map[string][]rbacv1.PolicyRule{}
	for _, u := range objs["ClusterRole"] {
		clusterRoles[u.GetName()] = chart.As[rbacv1.ClusterRole](t, u).Rules
	}
	roles := map[string][]rbacv1.PolicyRule{}
	for _, u := range objs["Role"] {
		roles[u.GetNamespace()+"/"+u.GetName()] = chart.As[rbacv1.Role](t, u).Rules
	}
	var out []grant
	add := func(role, namespace string, rules []rbacv1.PolicyRule, found bool, subjects []rbacv1.Subject) {
		if !found {
			t.Errorf("a binding refers to %s, which the chart does not render", role)
		}
		for _, s := range subjects {
			for _, r := range rules {
				out = append(out, grant{role: role, namespace: namespace, subject: s.Namespace + "/" + s.Name, rule: r})
			}
		}
	}
	for _, u := range objs["ClusterRoleBinding"] {
		b := chart.As[rbacv1.ClusterRoleBinding](t, u)
		rules, ok := clusterRoles[b.RoleRef.Name]
		add("ClusterRole "+b.RoleRef.Name, "", rules, ok, b.Subjects)
	}
	for _, u := range objs["RoleBinding"] {
		b := chart.As[rbacv1.RoleBinding](t, u)
		var rules []rbacv1.PolicyRule
		ok := false
		if b.RoleRef.Kind == "ClusterRole" {
			rules, ok = clusterRoles[b.RoleRef.Name]
		} else {
			rules, ok = roles[b.Namespace+"/"+b.RoleRef.Name]
		}
		add(b.RoleRef.Kind+" "+b.RoleRef.Name, b.Namespace, rules, ok, b.Subjects)
	}
	return out
}

// Rights that amount to more than the operator's job whatever the values: a wildcard, granting
// or assuming other identities' rights, running code in or reading through other pods and nodes,
// and listing Secrets (the operator reads the few it owns by name, around its cache).
var (
	escalatingVerbs     = []string{"bind", "escalate", "impersonate", "approve", "*"}
	escalatingResources = []string{
		"*", "pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "nodes/proxy", "services/proxy",
		"serviceaccounts", "serviceaccounts/token", "roles", "rolebindings", "clusterroles", "clusterrolebindings",
		"certificatesigningrequests/approval", "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
		"customresourcedefinitions",
	}
	writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}
)

// clusterWideByDesign are the only resources the default values grant cluster-wide, and why:
// they are cluster-scoped, so no namespaced Role can grant them.
var clusterWideByDesign = map[string]string{
	"nodes":                     "placement reads CPU feature labels; the crypto labeller patches its own node's labels",
	"encryptionprofiles":        "cluster-scoped profiles; the operator applies the shipped ones",
	"encryptionprofiles/status": "the profile reconciler's status write",
	"tokenreviews":              "the metrics endpoint authenticates its scrapers",
	"subjectaccessreviews":      "the metrics endpoint authorizes its scrapers",
	"namespaces":                "Pod Security labels of the watched namespaces, by name",
}

func checkNoEscalation(t *testing.T, gs []grant) {
	t.Helper()
	for _, problem := range escalations(gs) {
		t.Error(problem)
	}
}

func escalations(gs []grant) []string {
	var problems []string
	for _, g := range gs {
		r := g.rule
		for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames, r.NonResourceURLs} {
			if slices.Contains(field, "*") {
				problems = append(problems, fmt.Sprintf("wildcard: %s", g))
			}
		}
		for _, v := range escalatingVerbs {
			if slices.Contains(r.Verbs, v) {
				problems = append(problems, fmt.Sprintf("escalation verb %s: %s", v, g))
			}
		}
		for _, res := range escalatingResources {
			if slices.Contains(r.Resources, res) {
				problems = append(problems, fmt.Sprintf("escalation path %s: %s", res, g))
			}
		}
		if slices.Contains(r.Resources, "secrets") && (slices.Contains(r.Verbs, "list") || slices.Contains(r.Verbs, "watch")) {
			problems = append(problems, fmt.Sprintf("Secrets listed or watched: %s", g))
		}
	}
	return problems
}

// The default installation: namespaced Roles in watch.namespaces, nothing namespaced cluster-wide.
func TestChartRBACIsLeastPrivilege(t *testing.T) {
	tier.Full(t, "helm")
	for _, tc := range []struct {
		sets    []string
		watched []string
	}{
		{nil, []string{"default"}},
		{[]string{"watch.namespaces={team-a,team-b}"}, []string{"team-a", "team-b"}},
	} {
		t.Run(strings.Join(tc.watched, ","), func(t *testing.T) {
			objs := chart.Render(t, tc.sets...)
			gs := grants(t, objs)
			checkNoEscalation(t, gs)
			namespaces := map[string]bool{}
			for _, g := range gs {
				if g.namespace != "" {
					namespaces[g.namespace] = true
					// Outside the watched namespaces: leader election in the release namespace,
					// and the EncryptionProfiles' events in default.
					if !slices.Contains(tc.watched, g.namespace) {
						leader := g.namespace == chart.Namespace && strings.HasSuffix(g.role, "-leader-election")
						profileEvents := g.namespace == "default" && strings.HasSuffix(g.role, "-profile-events") &&
							slices.Equal(g.rule.Resources, []string{"events"})
						if !leader && !profileEvents {
							t.Errorf("a grant outside the watched namespaces: %s", g)
						}
					}
					continue
				}
				for _, res := range g.rule.Resources {
					if _, ok := clusterWideByDesign[res]; !ok {
						t.Errorf("namespaced resource %s granted cluster-wide: %s", res, g)
					}
				}
				if slices.Contains(g.rule.Resources, "namespaces") && !slices.Equal(g.rule.ResourceNames, tc.watched) {
					t.Errorf("namespaces readable beyond the watched ones: %s", g)
				}
				if slices.Contains(g.rule.Resources, "nodes") && slices.ContainsFunc(g.rule.Verbs, func(v string) bool { return slices.Contains(writeVerbs, v) }) &&
					!strings.HasSuffix(g.role, "-crypto-labeller") {
					t.Errorf("only the crypto labeller writes nodes: %s", g)
				}
			}
			for _, ns := range tc.watched {
				if !namespaces[ns] {
					t.Errorf("no Role in watched namespace %s", ns)
				}
			}
			want := len(tc.watched) + 1
			if !slices.Contains(tc.watched, "default") {
				want++
			}
			if n := len(objs["Role"]); n != want {
				t.Errorf("%d Roles, want one per watched namespace, leader election's and the profiles' events'", n)
			}
		})
	}
}

// watch.allNamespaces trades the Roles for one ClusterRole, still without an escalation path.
func TestChartRBACAllNamespaces(t *testing.T) {
	tier.Full(t, "helm")
	objs := chart.Render(t, "watch.allNamespaces=true")
	gs := grants(t, objs)
	checkNoEscalation(t, gs)
	for _, g := range gs {
		if g.namespace != "" && !strings.HasSuffix(g.role, "-leader-election") {
			t.Errorf("a namespaced grant under watch.allNamespaces: %s", g)
		}
		if slices.Contains(g.rule.Resources, "namespaces") && len(g.rule.ResourceNames) != 0 {
			t.Errorf("namespaces by name under watch.allNamespaces: %s", g)
		}
	}
	if !slices.ContainsFunc(gs, func(g grant) bool {
		return g.namespace == "" && slices.Contains(g.rule.Resources, "statefulsets") && slices.Contains(g.rule.Verbs, "create")
	}) {
		t.Error("watch.allNamespaces does not grant the namespaced rules cluster-wide")
	}
}

// The checker itself: each kind of escalation fails it.
func TestChartRBACCheckerCatches(t *testing.T) {
	for _, r := range []rbacv1.PolicyRule{
		{APIGroups: []string{"*"}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}},
		{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}},
	} {
		if len(escalations([]grant{{role: "test", rule: r}})) == 0 {
			t.Errorf("the checker passes %+v", r)
		}
	}
}
