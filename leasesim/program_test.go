package leasesim

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"

	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/internal/longtest"
)

func TestRelativeMainPackage(t *testing.T) {
	for _, c := range []struct{ path, module, want string }{
		{"github.com/leasekit/leasekit/cmd/leasesim", "github.com/leasekit/leasekit", "./cmd/leasesim"},
		{"example.com/userlock/cmd/usersim", "example.com/userlock", "./cmd/usersim"},
		{"example.com/tool", "example.com/tool", "."},
		{"github.com/leasekit/leasekit/leasesim.test", "github.com/leasekit/leasekit", packageDefault},
		{"command-line-arguments", "", packageDefault},
		{"example.com/toolkit/cmd/x", "example.com/tool", packageDefault},
	} {
		require.Equal(t, c.want, relativeMainPackage(c.path, c.module), "%s in %s", c.path, c.module)
	}
}

func TestDeclaresModule(t *testing.T) {
	require.True(t, declaresModule("// c\nmodule example.com/userlock\n\ngo 1.26\n", "example.com/userlock"))
	require.True(t, declaresModule("module \"example.com/userlock\"\n", "example.com/userlock"))
	require.False(t, declaresModule("module example.com/userlock/v2\n", "example.com/userlock"))
	require.False(t, declaresModule("require example.com/userlock v1.0.0\n", "example.com/userlock"))
}

func TestCommandNamesItsPackageInReplayCommands(t *testing.T) {
	c := &Command{Catalog: command.Catalog, Package: "./cmd/mysim"}
	require.Equal(t, "go run ./cmd/mysim replay a/b.seed", c.replayCommand("a/b.seed"))
	require.Equal(t, "go run ./cmd/leasesim replay a/b.seed", command.replayCommand("a/b.seed"), "a test binary names leasekit's")
	var stderr strings.Builder
	require.Equal(t, campaign.ExitUsage, (&Command{}).Run([]string{"run"}, &strings.Builder{}, &stderr))
	require.Contains(t, stderr.String(), "no engine catalog")
}

func TestReplayAndExploreDefaultToTheCatalogsEngine(t *testing.T) {
	require.Equal(t, "lease", command.replayEngineDefault())
	toy := campaign.SelfTestEngine()
	toy.Name, toy.Hidden = "userlock", false
	user := &Command{Catalog: campaign.NewCatalog(toy)}
	require.Equal(t, "userlock", user.replayEngineDefault())
	var stdout, stderr strings.Builder
	require.Equal(t, campaign.ExitOK, user.Run([]string{"replay", "--quiet", "7"}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "replayed twice, traced and untraced: the same run")
}

// TestMutantsNamesWhatIsMissing: mutants refuses, naming the missing piece,
// a root without a catalog, a root without the main package, and a working
// directory outside the binary's module.
func TestMutantsNamesWhatIsMissing(t *testing.T) {
	empty := t.TempDir()
	code, _, stderr := leasesim("mutants", "--root", empty)
	require.Equal(t, campaign.ExitUsage, code, stderr)
	require.Contains(t, stderr, filepath.Join(empty, "mutants", "<name>", "mutation.txt"))

	code, _, stderr = leasesim("mutants", "--root", "..", "--package", "./cmd/nosuchsim")
	require.Equal(t, campaign.ExitUsage, code, stderr)
	require.Contains(t, stderr, "no main package ./cmd/nosuchsim under ..")

	_, err := moduleRoot("example.com/not-this-module")
	require.ErrorContains(t, err, "no go.mod of module example.com/not-this-module")
	root, err := moduleRoot("github.com/leasekit/leasekit")
	require.NoError(t, err)
	want, err := filepath.Abs("..")
	require.NoError(t, err)
	require.Equal(t, want, root)
}

// userMain is a user module's whole leasesim: its own engine (here
// leasekit's self-test lock under the user's name) in a catalog.
const userMain = `package main

import (
	"github.com/leasekit/leasekit/campaign"
	"github.com/leasekit/leasekit/leasesim"
)

func userEngine() *campaign.Engine {
	e := campaign.SelfTestEngine()
	e.Name, e.Doc = "userlock", "the user's lock"
	e.Hidden = false
	return e
}

func main() { leasesim.Main(campaign.NewCatalog(userEngine())) }
`

// userMutant plants a bug in the user's own code: a step budget too small
// for a run to finish (a liveness finding).
const userMutant = `file: cmd/usersim/main.go
engine: userlock
bug: the user's engine gets a step budget no run can finish in
--- old
	e.Hidden = false
--- new
	e.Hidden = false
	e.StepsMax = 3
--- end
`

// writeUserModule writes a module outside leasekit that requires it through
// a replace directive, with its own cmd/usersim and mutants/ catalog.
func writeUserModule(t *testing.T) string {
	t.Helper()
	leasekit, err := filepath.Abs("..")
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(leasekit, "go.mod"))
	require.NoError(t, err)
	_, requires, ok := strings.Cut(string(gomod), "\nrequire")
	require.True(t, ok, "leasekit's go.mod has a require block")
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/userlock\n\ngo 1.26\n\nrequire github.com/leasekit/leasekit v0.0.0\n\nreplace github.com/leasekit/leasekit => " +
			leasekit + "\n\nrequire" + requires,
		"cmd/usersim/main.go":                  userMain,
		"mutants/userlock-budget/mutation.txt": userMutant,
	}
	sum, err := os.ReadFile(filepath.Join(leasekit, "go.sum"))
	require.NoError(t, err)
	files["go.sum"] = string(sum)
	for name, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

// userGo runs the go command in the user module, offline: every module it
// needs is leasekit's, already in the module cache.
func userGo(t *testing.T, dir string, args ...string) {
	t.Helper()
	command := exec.Command("go", args...)
	command.Dir = dir
	command.Env = append(os.Environ(), "GOFLAGS="+os.Getenv("GOFLAGS")+" -mod=mod", "GOPROXY=off")
	output, err := command.CombinedOutput()
	require.NoError(t, err, "go %v: %s", args, output)
}

// TestUserModuleGetsEveryCommand is issue 20's item 5 as a user does it: a
// module outside leasekit whose cmd/ is leasesim.Main over its own engine
// runs a campaign, names its own main package in replay commands, explains,
// shrinks and replays the seed file, replays a seed number, explores,
// benches, and hunts its own catalog of planted bugs with mutants.
func TestUserModuleGetsEveryCommand(t *testing.T) {
	longtest.Require(t, "builds a user module's leasesim and a mutant of it (about 30 s)")
	dir := writeUserModule(t)
	binary := filepath.Join(t.TempDir(), "usersim")
	userGo(t, dir, "build", "-o", binary, "./cmd/usersim")
	inUser := func(args ...string) (int, string) {
		t.Helper()
		command := exec.Command(binary, args...)
		command.Dir = dir
		command.Env = append(os.Environ(), "GOFLAGS="+os.Getenv("GOFLAGS")+" -mod=mod", "GOPROXY=off")
		output, err := command.Output()
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), string(output) + string(exit.Stderr)
		}
		require.NoError(t, err)
		return 0, string(output)
	}

	code, output := inUser("run", "--seeds", "30", "--json", "--workers", "1")
	require.Equal(t, campaign.ExitOK, code, output)
	var report campaign.Report
	require.NoError(t, json.Unmarshal([]byte(output), &report))
	require.Equal(t, []string{"userlock"}, report.Engines, "all is the user's catalog")
	require.Equal(t, 30, report.Runs)

	code, output = inUser("run", "--seeds", "2", "--steps-max", "3", "--shrink-max", "1", "--shrink-runs", "20", "--out", "seeds")
	require.Equal(t, campaign.ExitLiveness, code, output)
	require.Contains(t, output, "go run ./cmd/usersim replay seeds/userlock/", "the replay command names the user's main package")

	seeds, err := filepath.Glob(filepath.Join(dir, "seeds", "userlock", "*.seed"))
	require.NoError(t, err)
	require.Len(t, seeds, 1, "the shrunk failure's seed file")
	seeds[0], err = filepath.Rel(dir, seeds[0])
	require.NoError(t, err)
	code, output = inUser("explain", seeds[0])
	require.Equal(t, campaign.ExitOK, code, output)
	require.Contains(t, output, "liveness")
	code, output = inUser("shrink", "--runs", "20", seeds[0])
	require.Equal(t, campaign.ExitLiveness, code, output)
	require.Contains(t, output, "go run ./cmd/usersim replay seeds/userlock/")
	code, output = inUser("replay", "--quiet", seeds[0])
	require.Equal(t, campaign.ExitLiveness, code, output)
	require.Contains(t, output, "reproduces the recorded finding")

	code, output = inUser("replay", "--quiet", "4")
	require.Equal(t, campaign.ExitOK, code, output)
	require.Contains(t, output, "replayed twice, traced and untraced: the same run")
	code, output = inUser("explore", "--choices-max", "1", "--decisions-max", "10")
	require.Equal(t, campaign.ExitOK, code, output)
	require.Contains(t, output, "leasesim explore userlock:")
	code, output = inUser("bench", "--seeds", "2", "--workers", "1", "--rounds", "2", "--repeat", "1")
	require.Equal(t, campaign.ExitOK, code, output)
	require.Contains(t, output, "| userlock | 2 |")

	code, output = inUser("mutants", "--json", "--shrink-runs", "20", "--shrink-time", "2s", "--duration", "30s")
	require.Equal(t, campaign.ExitOK, code, output)
	var rows []MutantRow
	require.NoError(t, json.Unmarshal([]byte(output[:strings.LastIndex(output, "]")+1]), &rows), output)
	require.Len(t, rows, 1)
	t.Logf("user mutant: %+v", rows[0])
	require.Empty(t, rows[0].Error)
	require.Equal(t, "userlock-budget", rows[0].Name)
	require.True(t, rows[0].Hunt.Found, "the user's planted bug is found: %+v", rows[0])
	require.Equal(t, "liveness", rows[0].Hunt.Outcome)
	require.Equal(t, "campaign", rows[0].FoundBy)

	// The catalog check: no stored seed and no test: line is a lost mutant;
	// the saved seed reproduces under the mutant; a seed that no longer
	// fails there is a lost mutant again.
	code, output = inUser("mutants", "--check-seeds")
	require.Equal(t, campaign.ExitViolation, code, output)
	require.Contains(t, output, "no stored seed of engine userlock under campaign/testdata/mutant-seeds/userlock-budget")
	require.Contains(t, output, "and no test: line")
	code, output = inUser("mutants", "--shrink-runs", "20", "--shrink-time", "2s", "--duration", "30s", "--save-seeds", "campaign/testdata/mutant-seeds")
	require.Equal(t, campaign.ExitOK, code, output)
	code, output = inUser("mutants", "--check-seeds")
	require.Equal(t, campaign.ExitOK, code, output)
	require.Contains(t, output, "1 stored seeds replayed under their mutants (0 drifted but still reproduce), 0 tests run under theirs, 0 failed")
	saved, err := filepath.Glob(filepath.Join(dir, "campaign/testdata/mutant-seeds/userlock-budget/*/*.seed"))
	require.NoError(t, err)
	require.Len(t, saved, 1)
	data, err := os.ReadFile(saved[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(saved[0], []byte(strings.Replace(string(data), "\nfound=liveness\n", "\nfound=ok\n", 1)), 0o644))
	code, output = inUser("mutants", "--check-seeds")
	require.Equal(t, campaign.ExitViolation, code, output)
	require.Contains(t, output, "no longer reproduces its finding under the mutant")
}
