// Command controller is cert-manager v1.11.5's controller entry point, built from the Go module proxy by
// hack/cert-manager-images.sh (v1.11.5 is the newest release whose commands are in the main
// module; see ../shared/docs/FACTS.md).
package main

import (
	"flag"

	"github.com/cert-manager/cert-manager/cmd/controller/app"
	"github.com/cert-manager/cert-manager/cmd/util"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

func main() {
	stopCh, exit := util.SetupExitHandler(util.GracefulShutdown)
	defer exit()
	logf.InitLogs(flag.CommandLine)
	defer logf.FlushLogs()
	cmd := app.NewCommandStartCertManagerController(stopCh)
	cmd.Flags().AddGoFlagSet(flag.CommandLine)
	_ = flag.CommandLine.Parse([]string{})
	if err := cmd.Execute(); err != nil {
		logf.Log.Error(err, "error while executing")
		util.SetExitCode(err)
	}
}
