// Command controller is cert-manager v1.11.5's controller, built from the Go module proxy by
// hack/kind/addon-images.sh (v1.11.5 is the newest release whose commands are in the main module;
// see ../shared/docs/FACTS.md).
package main

import (
	"github.com/cert-manager/cert-manager/cmd/controller/app"

	"secured.dev/hack/build/cert-manager/internal/command"
)

func main() { command.Run(app.NewCommandStartCertManagerController) }
