// Command webhook is cert-manager v1.11.5's webhook entry point, built from the Go module proxy by
// hack/cert-manager-images.sh (v1.11.5 is the newest release whose commands are in the main
// module; see ../shared/docs/FACTS.md).
package main

import (
	"flag"

	"github.com/cert-manager/cert-manager/cmd/util"
	"github.com/cert-manager/cert-manager/cmd/webhook/app"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

func main() {
	stopCh, exit := util.SetupExitHandler(util.GracefulShutdown)
	defer exit()
	logf.InitLogs(flag.CommandLine)
	defer logf.FlushLogs()
	cmd := app.NewServerCommand(stopCh)
	cmd.Flags().AddGoFlagSet(flag.CommandLine)
	_ = flag.CommandLine.Parse([]string{})
	if err := cmd.Execute(); err != nil {
		logf.Log.Error(err, "error executing command")
		util.SetExitCode(err)
	}
}
