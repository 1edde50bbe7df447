// Package command runs one of cert-manager's commands the way its own main packages do: exit
// handling on signals, cert-manager's logging flags, and the exit code of the command's error.
package command

import (
	"flag"

	"github.com/cert-manager/cert-manager/cmd/util"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/spf13/cobra"
)

// Run builds the command with the channel closed on shutdown and executes it.
func Run(newCommand func(stopCh <-chan struct{}) *cobra.Command) {
	stopCh, exit := util.SetupExitHandler(util.GracefulShutdown)
	defer exit()
	logf.InitLogs(flag.CommandLine)
	defer logf.FlushLogs()
	cmd := newCommand(stopCh)
	cmd.Flags().AddGoFlagSet(flag.CommandLine)
	_ = flag.CommandLine.Parse([]string{})
	if err := cmd.Execute(); err != nil {
		logf.Log.Error(err, "error executing command")
		util.SetExitCode(err)
	}
}
