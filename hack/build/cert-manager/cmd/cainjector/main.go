// Command cainjector is cert-manager v1.11.5's cainjector, built from the Go module proxy by
// hack/kind/addon-images.sh (v1.11.5 is the newest release whose commands are in the main module;
// see ../shared/docs/FACTS.md).
package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cert-manager/cert-manager/cmd/cainjector/app"
	"github.com/cert-manager/cert-manager/cmd/util"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	"secured.dev/hack/build/cert-manager/internal/command"
)

func main() {
	command.Run(func(stopCh <-chan struct{}) *cobra.Command {
		ctrl.SetLogger(logf.Log)
		ctx := util.ContextWithStopCh(context.Background(), stopCh)
		return app.NewCommandStartInjectorController(ctx, os.Stdout, os.Stderr)
	})
}
