package dashboards

import (
	"regexp"
	"slices"
	"testing"
)

var variable = regexp.MustCompile(`\$\{?([a-z_]+)`)

// Every panel queries something, fits the grid and uses only the variables its dashboard
// defines (or Grafana's own).
func TestDashboardsAreWellFormed(t *testing.T) {
	uids := map[string]bool{}
	for _, d := range All() {
		if uids[d.UID] {
			t.Errorf("uid %s twice", d.UID)
		}
		uids[d.UID] = true
		defined := []string{"__rate_interval", "datasource"}
		for _, v := range d.Templating.List {
			defined = append(defined, v.Name)
		}
		ids := map[int]bool{}
		for _, p := range d.Panels {
			if ids[p.ID] || p.ID == 0 {
				t.Errorf("%s: panel id %d repeated or unset", d.UID, p.ID)
			}
			ids[p.ID] = true
			if len(p.Targets) == 0 || p.Title == "" {
				t.Errorf("%s: panel %d has no query or no title", d.UID, p.ID)
			}
			if p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("%s: panel %q overflows the grid: %+v", d.UID, p.Title, p.GridPos)
			}
		}
		for _, q := range d.Queries() {
			for _, m := range variable.FindAllStringSubmatch(q.Expr, -1) {
				if !slices.Contains(defined, m[1]) {
					t.Errorf("%s: $%s is not a variable of the dashboard", q.Where, m[1])
				}
			}
		}
	}
	if len(uids) != 3 {
		t.Errorf("%d dashboards, want 3", len(uids))
	}
}
