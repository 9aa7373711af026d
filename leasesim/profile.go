package leasesim

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfileFlag is --cpuprofile of run and bench: where the time of a
// campaign goes, and the input of cmd/leasesim/leasesim.pgo (docs/BENCH.md
// says how to regenerate it).
type cpuProfileFlag struct{ path string }

func (f *cpuProfileFlag) register(set *flag.FlagSet) {
	set.StringVar(&f.path, "cpuprofile", "", "write a CPU profile of the command to this file (pprof format)")
}

// start begins profiling if asked and returns the function that stops it
// and closes the file; the profile is complete only after that runs.
func (f *cpuProfileFlag) start() (stop func() error, err error) {
	if f.path == "" {
		return func() error { return nil }, nil
	}
	file, err := os.Create(f.path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		_ = file.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := file.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}
