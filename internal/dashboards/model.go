// Package dashboards builds the operator's Grafana dashboards as typed values; hack/gen/dashgen
// writes them to dashboards/*.json and the chart ships them as ConfigMaps for Grafana's
// dashboard sidecar. Only the part of Grafana's JSON model the dashboards use is typed here.
package dashboards

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Dashboard is Grafana's dashboard JSON model.
type Dashboard struct {
	UID           string     `json:"uid"`
	Title         string     `json:"title"`
	Description   string     `json:"description"`
	Tags          []string   `json:"tags"`
	SchemaVersion int        `json:"schemaVersion"`
	Editable      bool       `json:"editable"`
	Refresh       string     `json:"refresh"`
	Time          TimeRange  `json:"time"`
	Templating    Templating `json:"templating"`
	Panels        []Panel    `json:"panels"`
}

type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type Templating struct {
	List []Variable `json:"list"`
}

// Variable is a dashboard variable: the Prometheus data source, or label values of a metric.
type Variable struct {
	Name       string      `json:"name"`
	Label      string      `json:"label"`
	Type       string      `json:"type"`
	Query      any         `json:"query"`
	Datasource *Datasource `json:"datasource,omitempty"`
	Refresh    int         `json:"refresh,omitempty"`
	IncludeAll bool        `json:"includeAll,omitempty"`
	Multi      bool        `json:"multi,omitempty"`
}

type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Panel is one panel; Options are the panel type's own.
type Panel struct {
	ID          int            `json:"id"`
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	GridPos     GridPos        `json:"gridPos"`
	Datasource  Datasource     `json:"datasource"`
	Targets     []Target       `json:"targets"`
	FieldConfig FieldConfig    `json:"fieldConfig"`
	Options     map[string]any `json:"options,omitempty"`
}

type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// Target is one PromQL query of a panel.
type Target struct {
	RefID        string `json:"refId"`
	Expr         string `json:"expr"`
	LegendFormat string `json:"legendFormat,omitempty"`
	Instant      bool   `json:"instant,omitempty"`
	Format       string `json:"format,omitempty"`
}

type FieldConfig struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []Override    `json:"overrides"`
}

type FieldDefaults struct {
	Unit     string         `json:"unit,omitempty"`
	Min      *float64       `json:"min,omitempty"`
	Custom   map[string]any `json:"custom,omitempty"`
	Mappings []any          `json:"mappings,omitempty"`
}

// Override changes the properties of the fields a matcher selects, e.g. fills between a
// confidence interval's bounds.
type Override struct {
	Matcher    Matcher    `json:"matcher"`
	Properties []Property `json:"properties"`
}

type Matcher struct {
	ID      string `json:"id"`
	Options string `json:"options"`
}

type Property struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// JSON of the dashboard as checked in.
func (d Dashboard) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	return append(b, '\n'), err
}

// Query is a PromQL expression a dashboard runs, with where it comes from.
type Query struct {
	Where string
	Expr  string
}

var labelValues = regexp.MustCompile(`^label_values\((.+), *([a-z_]+)\)$`)

// Queries lists every PromQL query of the dashboard, its variables' included (Grafana's
// label_values(metric, label) as the PromQL that answers it), for tests to run.
func (d Dashboard) Queries() []Query {
	var out []Query
	for _, v := range d.Templating.List {
		q, ok := v.Query.(map[string]any)
		if !ok || v.Type != "query" {
			continue
		}
		if m := labelValues.FindStringSubmatch(q["query"].(string)); m != nil {
			out = append(out, Query{Where: d.UID + " variable " + v.Name, Expr: "group by (" + m[2] + ") (" + m[1] + ")"})
		}
	}
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out = append(out, Query{Where: d.UID + " panel " + p.Title + " " + t.RefID, Expr: t.Expr})
		}
	}
	return out
}

// Substitute replaces dashboard variables with values, as Grafana would.
func Substitute(expr string, values map[string]string) string {
	for k, v := range values {
		expr = strings.ReplaceAll(expr, "$"+k, v)
	}
	return expr
}
