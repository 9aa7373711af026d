// Package archtest enforces the architecture rules of docs/ARCHITECTURE.md
// as ordinary tests: engines stay deterministic (everything external goes
// through the injected interfaces, nothing depends on map order) and
// packages import only what the dependency direction allows. It is the one
// ban-list of the engines: every engine package, internal helpers and the
// test fakes of lease/leasetest included, is scanned by the same rules. The
// scanner lives in a non-test file so its own tests can plant violations
// and prove it catches them.
package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// bannedImports are packages an engine may not import: each is a way to
// reach the OS, real time or unseeded randomness around the injected
// interfaces.
var bannedImports = map[string]string{
	"os":               "the filesystem and process table come through lease.FS and lease.Inspector",
	"os/exec":          "engines do not start processes",
	"os/signal":        "engines do not handle signals",
	"syscall":          "errnos are tested with io/fs sentinels; syscalls belong to lease/osenv",
	"math/rand":        "randomness comes through lease.IDSource",
	"math/rand/v2":     "randomness comes through lease.IDSource",
	"crypto/rand":      "randomness comes through lease.IDSource",
	"net":              "engines do no networking",
	"unsafe":           "engines do not need unsafe",
	"runtime":          "engines do not inspect or steer the runtime",
	"golang.org/x/sys": "syscalls belong to lease/osenv",
}

// bannedTimeCalls read or wait on real time; engines use lease.Clock.
var bannedTimeCalls = map[string]bool{
	"Now": true, "Sleep": true, "Since": true, "Until": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true,
}

// Finding is one rule broken at one place.
type Finding struct {
	Position string
	Rule     string
}

func (f Finding) String() string { return f.Position + ": " + f.Rule }

// ScanSource checks one engine source file and returns what it breaks.
func ScanSource(filename string, source []byte) ([]Finding, error) {
	fileSet := token.NewFileSet()
	file, err := parser.ParseFile(fileSet, filename, source, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	scanner := &fileScanner{fileSet: fileSet, timeName: "", findings: nil}
	scanner.checkImports(file)
	scanner.prepareMapOrder(file)
	ast.Inspect(file, scanner.visit)
	sort.Slice(scanner.findings, func(i, j int) bool {
		return scanner.findings[i].Position < scanner.findings[j].Position
	})
	return scanner.findings, nil
}

type fileScanner struct {
	fileSet  *token.FileSet
	timeName string // the local name of package time, "" if not imported
	findings []Finding
	mapOrderScan
}

func (s *fileScanner) report(pos token.Pos, format string, args ...any) {
	position := s.fileSet.Position(pos)
	s.findings = append(s.findings, Finding{
		Position: fmt.Sprintf("%s:%d", position.Filename, position.Line),
		Rule:     fmt.Sprintf(format, args...),
	})
}

func (s *fileScanner) checkImports(file *ast.File) {
	for _, spec := range file.Imports {
		importPath, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			panic(fmt.Sprintf("archtest: parser accepted a bad import literal %s", spec.Path.Value))
		}
		if why, banned := importBan(importPath); banned {
			s.report(spec.Pos(), "imports %q: %s", importPath, why)
		}
		s.noteMapOrderImport(spec)
		if importPath == "time" {
			s.timeName = "time"
			if spec.Name != nil {
				s.timeName = spec.Name.Name
			}
		}
	}
}

func importBan(importPath string) (string, bool) {
	if strings.HasPrefix(importPath, "github.com/google/") {
		if importPath == "github.com/google/uuid" {
			return "", false
		}
		return "only github.com/google/uuid is allowed from github.com/google", true
	}
	if strings.HasPrefix(importPath, "golang.org/x/sys") {
		return bannedImports["golang.org/x/sys"], true
	}
	why, banned := bannedImports[importPath]
	return why, banned
}

func (s *fileScanner) visit(node ast.Node) bool {
	switch n := node.(type) {
	case *ast.GoStmt:
		s.report(n.Pos(), "starts a goroutine: engines run one step at a time under the simulator's scheduler")
	case *ast.SelectStmt:
		s.report(n.Pos(), "uses select: engines share no channels, and among several ready cases the runtime picks at random")
	case *ast.SelectorExpr:
		s.checkTimeCall(n)
	case *ast.RangeStmt:
		if what := s.rangeOverMap(n); what != "" {
			s.report(n.Pos(), "ranges over %s: map iteration order is random; range over slices.Sorted(maps.Keys(...))", what)
		}
	case *ast.CallExpr:
		if iterator := s.unsortedMapIterator(n); iterator != "" {
			s.report(n.Pos(), "uses %s outside slices.Sorted: it yields in random map order", iterator)
		}
	}
	return true
}

func (s *fileScanner) checkTimeCall(selector *ast.SelectorExpr) {
	if s.timeName == "" {
		return
	}
	if pkg, ok := selector.X.(*ast.Ident); ok && pkg.Name == s.timeName && bannedTimeCalls[selector.Sel.Name] {
		s.report(selector.Pos(), "uses time.%s: engines read time through lease.Clock", selector.Sel.Name)
	}
}
