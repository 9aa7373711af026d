package realstress

import (
	"flag"
	"fmt"
	"io"
)

// WorkerMain is the hidden `leasereal stress-worker` subcommand: it parses
// WorkerArgs and runs one worker incarnation.
func WorkerMain(args []string) error {
	if len(args) == 1 && args[0] == "--child" {
		return childMain()
	}
	if len(args) > 0 && args[0] == "--job" {
		return jobMain(args[1:])
	}
	flags := flag.NewFlagSet("stress-worker", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	var config WorkerConfig
	flags.StringVar(&config.Engine, "engine", EngineLease, "")
	flags.StringVar(&config.Namespace, "namespace", "", "")
	flags.IntVar(&config.Worker, "worker", 0, "")
	flags.IntVar(&config.Lane, "lane", 0, "")
	flags.IntVar(&config.Ops, "ops", 0, "")
	flags.Uint64Var(&config.Seed, "seed", 0, "")
	flags.StringVar(&config.LogPath, "log", "", "")
	flags.BoolVar(&config.NoInspect, "no-inspect", false, "")
	flags.BoolVar(&config.PlantBlindInspector, "plant-blind-inspector", false, "")
	flags.StringVar(&config.SpawnsPath, "spawns", "", "")
	flags.StringVar(&config.DeathsPath, "deaths", "", "")
	flags.StringVar(&config.BarrierDir, "barrier", "", "")
	flags.StringVar(&config.Role, "role", "", "")
	flags.StringVar(&config.WorkDir, "work", "", "")
	flags.IntVar(&config.ChildPID, "child-pid", 0, "")
	flags.IntVar(&config.ChildLane, "child-lane", 0, "")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if config.Namespace == "" || config.Lane <= 0 || config.Ops < 0 || config.LogPath == "" || config.SpawnsPath == "" || config.DeathsPath == "" || flags.NArg() != 0 {
		return fmt.Errorf("stress-worker: --namespace, --lane, --log, --spawns and --deaths are required")
	}
	return RunWorker(config)
}

// newQuietFlagSet is a flag set for a hidden subcommand: errors are
// returned, nothing is printed.
func newQuietFlagSet(name string) *flag.FlagSet {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	return flags
}
