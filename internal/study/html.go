package study

import (
	"bytes"
	_ "embed"
	"html/template"
	"strings"
)

//go:embed report.html.tmpl
var htmlTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"mul100": func(f float64) float64 { return 100 * f },
	"millis": func(us int64) float64 { return float64(us) / 1000 },
	"withCI": withCI,
}).Parse(htmlTemplate))

// HTML renders the report as one self-contained file for people without Grafana: the tables
// in HTML, and charts (overhead with its 95% interval, throughput per cell) that a small
// script draws as SVG from the report's JSON, embedded in the page. No server, no network.
func (r Report) HTML() ([]byte, error) {
	js, err := r.JSON()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = page.Execute(&b, struct {
		Report
		Data           template.JS
		Recommendation string
		MetricName     string
		WallTimeText   string
		SwitchesText   string
	}{r, template.JS(bytes.ReplaceAll(js, []byte("</"), []byte(`<\/`))), strings.ReplaceAll(r.recommendationText(), "**", ""), metricName(r.OverheadMetric), r.wallTimeText(), r.switchesText()})
	return b.Bytes(), err
}
