package models

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsArePorcupineAndStdlibOnly enforces that the specification
// shares no code with the engines it checks (ARCHITECTURE.md): every
// import of this package, tests included, is the standard library or
// porcupine. Porcupine itself imports only the standard library.
func TestImportsArePorcupineAndStdlibOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Go files found in the package directory")
	}
	set := token.NewFileSet()
	for _, file := range files {
		parsed, err := parser.ParseFile(set, file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range parsed.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			standard := !strings.Contains(strings.Split(path, "/")[0], ".")
			if !standard && path != "github.com/anishathalye/porcupine" {
				t.Errorf("%s imports %q: models may import only porcupine and the standard library", file, path)
			}
		}
	}
}
