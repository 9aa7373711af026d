package leasesim

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/leasekit/leasekit/campaign"
)

// packageDefault is the main package when the build information names none
// (a test binary, or `go run file.go`): leasekit's own.
const packageDefault = "./cmd/leasesim"

// mainPackage returns c.Package, or MainPackage's answer.
func (c *Command) mainPackage() string {
	if c.Package != "" {
		return c.Package
	}
	return MainPackage()
}

// MainPackage returns the running binary's main package relative to its
// module root ("./cmd/leasesim" for leasekit's leasesim, "./cmd/mysim" for
// a user module's), read from the build information; "./cmd/leasesim" when
// that names no package of the main module (test binaries).
func MainPackage() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return packageDefault
	}
	return relativeMainPackage(info.Path, info.Main.Path)
}

// relativeMainPackage turns the main package's import path into a path
// relative to the module root.
func relativeMainPackage(path, module string) string {
	switch {
	case module == "" || strings.HasSuffix(path, ".test"):
		return packageDefault
	case path == module:
		return "."
	case strings.HasPrefix(path, module+"/"):
		return "./" + strings.TrimPrefix(path, module+"/")
	}
	return packageDefault
}

// mainModule is the module path of the running binary's main module.
func mainModule() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Path != "" {
		return info.Main.Path
	}
	return "github.com/leasekit/leasekit"
}

// replayCommand renders the paste-ready command that replays a seed file,
// run from the module root: "go run ./cmd/leasesim replay PATH".
func (c *Command) replayCommand(path string) string {
	return "go run " + c.mainPackage() + " replay " + path
}

// replayEngineDefault is the --engine of replay and explore: lease when
// the catalog has it, else the catalog's first engine.
func (c *Command) replayEngineDefault() string {
	names := c.Catalog.Names(false)
	if len(names) == 0 {
		names = c.Catalog.Names(true)
	}
	if len(names) == 0 || slices.Contains(names, "lease") {
		return "lease"
	}
	return names[0]
}

// moduleRoot walks up from the working directory to the go.mod that
// declares module (the module mutants overlays and builds).
func moduleRoot(module string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for range 64 {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declaresModule(string(data), module) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", &campaign.UsageError{Message: "mutants: no go.mod of module " + module +
		" (this binary's main module) in the working directory or above it; run inside the module or pass --root"}
}

// declaresModule reports whether a go.mod's module line names module.
func declaresModule(gomod, module string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 2 && fields[0] == "module" && strings.Trim(fields[1], `"`) == module {
			return true
		}
	}
	return false
}
