// Command dashgen writes the operator's Grafana dashboards (internal/dashboards) to
// dashboards/<uid>.json; `make generate` runs it and a test fails when they are stale.
package main

import (
	"log"
	"os"
	"path/filepath"

	"secured.dev/operator/internal/dashboards"
)

func main() {
	for _, d := range dashboards.All() {
		b, err := d.JSON()
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("dashboards", d.UID+".json"), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
