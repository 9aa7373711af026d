// Package doctable keeps the generated tables of leasekit's docs honest. A
// generated table sits in a Markdown file between two markers,
//
//	<!-- table:NAME:begin -->
//	...the block the command printed...
//	<!-- table:NAME:end -->
//
// and the test of the package that owns the command compares the block with
// what the command prints on the committed code, so a doc cannot drift from
// the code it describes. With LEASEKIT_DOCS_UPDATE=1 such a test rewrites the
// block instead (UpdateRequested).
package doctable

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// UpdateVariable is the environment variable that makes doc-table tests
// rewrite their blocks instead of failing on a difference.
const UpdateVariable = "LEASEKIT_DOCS_UPDATE"

// UpdateRequested reports whether UpdateVariable is set to 1.
func UpdateRequested() bool { return os.Getenv(UpdateVariable) == "1" }

// Begin and End are the markers around the block named name.
func Begin(name string) string { return "<!-- table:" + name + ":begin -->" }

// End is the marker after the block named name.
func End(name string) string { return "<!-- table:" + name + ":end -->" }

// ErrNoBlock is returned when a document lacks a block's markers (or has
// them out of order, or more than once).
var ErrNoBlock = errors.New("doctable: no block")

// Wrap returns body between the markers of name, each on its own line.
func Wrap(name, body string) string {
	return Begin(name) + "\n" + strings.TrimRight(body, "\n") + "\n" + End(name) + "\n"
}

// Extract returns the text between the markers of name (without them),
// ending in a newline.
func Extract(doc, name string) (string, error) {
	start, stop, err := span(doc, name)
	if err != nil {
		return "", err
	}
	return doc[start:stop], nil
}

// Replace returns doc with the text between the markers of name replaced
// by body.
func Replace(doc, name, body string) (string, error) {
	start, stop, err := span(doc, name)
	if err != nil {
		return "", err
	}
	return doc[:start] + strings.TrimRight(body, "\n") + "\n" + doc[stop:], nil
}

// span finds the block's text: from after the begin marker's line to the
// start of the end marker's line.
func span(doc, name string) (int, int, error) {
	begin, end := Begin(name), End(name)
	if strings.Count(doc, begin) != 1 || strings.Count(doc, end) != 1 {
		return 0, 0, fmt.Errorf("%w %q: want each of %s and %s exactly once", ErrNoBlock, name, begin, end)
	}
	start := strings.Index(doc, begin) + len(begin)
	if start < len(doc) && doc[start] == '\n' {
		start++
	}
	stop := strings.Index(doc, end)
	if stop < start {
		return 0, 0, fmt.Errorf("%w %q: %s comes before %s", ErrNoBlock, name, end, begin)
	}
	return start, stop, nil
}

// Sync compares the block name of the Markdown file at path with want. It
// returns nil when they are equal; otherwise, with update, it rewrites the
// block and returns nil, and without, it returns an error naming the first
// line that differs and how to regenerate.
func Sync(path, name, want string, update bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	got, err := Extract(string(data), name)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	want = strings.TrimRight(want, "\n") + "\n"
	if got == want {
		return nil
	}
	if update {
		updated, err := Replace(string(data), name, want)
		if err != nil {
			return err
		}
		return os.WriteFile(path, []byte(updated), 0o644)
	}
	return fmt.Errorf("%s: the %q table differs from what its command prints: %s; regenerate it (%s=1 with the table's test, or the command beside it)",
		path, name, FirstDifference(got, want), UpdateVariable)
}

// FirstDifference describes the first line at which got and want differ.
func FirstDifference(got, want string) string {
	gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gotLines), len(wantLines)) {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			return fmt.Sprintf("line %d of the block is\n\t%s\nbut the command prints\n\t%s", i+1, g, w)
		}
	}
	return "no line differs"
}
