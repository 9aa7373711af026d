package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/realstress"
	"github.com/leasekit/leasekit/realstress/simworld"
)

// TestDifferentialScenarios runs every testdata/scenarios/*.txt script
// once in the simulator's world (simfs + simproc, engine called directly)
// and once with real processes (one leasereal scenario-actor per actor
// incarnation, real SIGKILLs and zombies), and requires the same sequence
// of outcomes.
func TestDifferentialScenarios(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, script := range scripts {
		t.Run(filepath.Base(script), func(t *testing.T) {
			text, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			steps, err := realstress.ParseScenario(string(text))
			if err != nil {
				t.Fatal(err)
			}
			simulated, err := realstress.RunScenario(steps, simworld.New())
			if err != nil {
				t.Fatalf("sim: %v", err)
			}
			// The actors run a private copy of leasereal, so `upgrade` can
			// replace it on disk as a package upgrade would.
			executable := filepath.Join(t.TempDir(), "leasereal")
			copyBinary(t, executable)
			world := realstress.NewRealWorld(t.TempDir(), func(namespace, session string) *exec.Cmd {
				return exec.Command(executable, "scenario-actor", "--namespace", namespace, "--session", session)
			}, func() error {
				copyBinary(t, executable+".new")
				return os.Rename(executable+".new", executable)
			})
			defer world.Close()
			real, err := realstress.RunScenario(steps, world)
			if err != nil {
				t.Fatalf("real: %v", err)
			}
			t.Logf("outcomes:\n%s", strings.Join(real, "\n"))
			if !slices.Equal(simulated, real) {
				t.Fatalf("sim and real differ:\nsim:\n%s\nreal:\n%s", strings.Join(simulated, "\n"), strings.Join(real, "\n"))
			}
		})
	}
}

func copyBinary(t *testing.T, to string) {
	t.Helper()
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
