package leasesim

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
)

// readYAML parses the YAML subset the committed CI and Kubernetes files use,
// so their tests need no YAML dependency: block mappings and sequences by
// indentation, "- key: value" items, literal block scalars ("|"), flow
// sequences of scalars ("[a, "b"]"), empty flow collections ("{}", "[]"),
// plain, single- and double-quoted scalars, comments, and "---" between
// documents (readYAML returns the documents). Anything else is an error, so a
// file the reader misreads fails its test rather than passing it.
func readYAML(text string) ([]any, error) {
	var documents []any
	for _, document := range strings.Split("\n"+text, "\n---\n") {
		r := &yamlReader{lines: strings.Split(document, "\n")}
		r.skipBlank()
		if r.i == len(r.lines) {
			continue
		}
		value, err := r.block(r.indent())
		if err != nil {
			return nil, err
		}
		if r.skipBlank(); r.i < len(r.lines) {
			return nil, fmt.Errorf("yaml: line %q: unexpected indentation", r.lines[r.i])
		}
		documents = append(documents, value)
	}
	return documents, nil
}

type yamlReader struct {
	lines []string
	i     int
}

// skipBlank moves past blank and comment-only lines.
func (r *yamlReader) skipBlank() {
	for r.i < len(r.lines) {
		trimmed := strings.TrimSpace(r.lines[r.i])
		if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			return
		}
		r.i++
	}
}

func (r *yamlReader) indent() int {
	line := r.lines[r.i]
	return len(line) - len(strings.TrimLeft(line, " "))
}

func (r *yamlReader) text() string { return strings.TrimSpace(r.lines[r.i]) }

// block reads the mapping or sequence whose lines start at column indent.
func (r *yamlReader) block(indent int) (any, error) {
	if t := r.text(); t == "-" || strings.HasPrefix(t, "- ") {
		return r.sequence(indent)
	}
	return r.mapping(indent)
}

func (r *yamlReader) sequence(indent int) (any, error) {
	items := []any{}
	for r.skipBlank(); r.i < len(r.lines) && r.indent() == indent; r.skipBlank() {
		t := r.text()
		if t != "-" && !strings.HasPrefix(t, "- ") {
			break
		}
		item := strings.TrimSpace(strings.TrimPrefix(t, "-"))
		switch key, _, isMap := cutKey(item); {
		case item == "|" || item == "|-":
			r.i++
			items = append(items, r.literal(indent, item == "|"))
		case item == "":
			r.i++
			value, err := r.nested(indent)
			if err != nil {
				return nil, err
			}
			items = append(items, value)
		case isMap && key != "":
			// "- key: value": a mapping whose keys are at the item's column.
			after := r.lines[r.i][indent+1:]
			column := indent + 1 + len(after) - len(strings.TrimLeft(after, " "))
			r.lines[r.i] = strings.Repeat(" ", column) + item
			value, err := r.mapping(column)
			if err != nil {
				return nil, err
			}
			items = append(items, value)
		default:
			value, err := scalar(item)
			if err != nil {
				return nil, err
			}
			items = append(items, value)
			r.i++
		}
	}
	return items, nil
}

func (r *yamlReader) mapping(indent int) (any, error) {
	values := map[string]any{}
	for r.skipBlank(); r.i < len(r.lines) && r.indent() == indent; r.skipBlank() {
		key, rest, ok := cutKey(r.text())
		if !ok {
			return nil, fmt.Errorf("yaml: line %q is not key: value", r.text())
		}
		if _, dup := values[key]; dup {
			return nil, fmt.Errorf("yaml: key %q twice", key)
		}
		r.i++
		var value any
		var err error
		switch rest = stripComment(rest); rest {
		case "":
			value, err = r.nested(indent)
		case "|", "|-":
			value = r.literal(indent, rest == "|")
		default:
			value, err = scalar(rest)
		}
		if err != nil {
			return nil, err
		}
		values[key] = value
	}
	if r.i < len(r.lines) && r.indent() > indent {
		return nil, fmt.Errorf("yaml: line %q: unexpected indentation", r.text())
	}
	return values, nil
}

// nested reads the block under a "key:" or "-" line: deeper lines, or a
// sequence at the key's own column.
func (r *yamlReader) nested(indent int) (any, error) {
	if r.skipBlank(); r.i == len(r.lines) {
		return nil, nil
	}
	deeper := r.indent()
	if t := r.text(); deeper == indent && (t == "-" || strings.HasPrefix(t, "- ")) {
		return r.sequence(indent)
	}
	if deeper <= indent {
		return nil, nil
	}
	return r.block(deeper)
}

// literal reads a "|" block scalar: the deeper lines, verbatim, less the
// first line's indentation.
func (r *yamlReader) literal(indent int, keepNewline bool) string {
	var lines []string
	column := -1
	for ; r.i < len(r.lines); r.i++ {
		line := r.lines[r.i]
		if strings.TrimSpace(line) == "" {
			lines = append(lines, "")
			continue
		}
		depth := len(line) - len(strings.TrimLeft(line, " "))
		if depth <= indent {
			break
		}
		if column < 0 {
			column = depth
		}
		lines = append(lines, line[min(column, depth):])
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
		r.i-- // leave trailing blank lines to the caller
	}
	text := strings.Join(lines, "\n")
	if keepNewline {
		text += "\n"
	}
	return text
}

// cutKey splits "key: rest" (or "key:") outside quotes.
func cutKey(text string) (string, string, bool) {
	if strings.HasPrefix(text, `"`) || strings.HasPrefix(text, "'") || strings.HasPrefix(text, "[") || strings.HasPrefix(text, "{") {
		return "", "", false
	}
	if key, ok := strings.CutSuffix(text, ":"); ok {
		return key, "", !strings.Contains(key, ": ")
	}
	key, rest, ok := strings.Cut(text, ": ")
	return key, rest, ok
}

// stripComment removes a " #" comment outside quotes.
func stripComment(text string) string {
	quote := rune(0)
	for i, c := range text {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#' && (i == 0 || text[i-1] == ' '):
			return strings.TrimSpace(text[:i])
		}
	}
	return strings.TrimSpace(text)
}

// scalar reads a plain or quoted scalar, or a flow collection of scalars.
func scalar(text string) (any, error) {
	text = stripComment(text)
	switch {
	case text == "":
		return "", nil
	case text == "{}":
		return map[string]any{}, nil
	case strings.HasPrefix(text, "[") && strings.HasSuffix(text, "]"):
		items := []any{}
		inner := strings.TrimSpace(text[1 : len(text)-1])
		if inner == "" {
			return items, nil
		}
		for _, field := range strings.Split(inner, ",") {
			value, err := scalar(strings.TrimSpace(field))
			if err != nil {
				return nil, err
			}
			items = append(items, value)
		}
		return items, nil
	case strings.HasPrefix(text, `"`):
		return strconv.Unquote(text)
	case strings.HasPrefix(text, "'") && strings.HasSuffix(text, "'") && len(text) >= 2:
		return strings.ReplaceAll(text[1:len(text)-1], "''", "'"), nil
	case strings.ContainsAny(text[:1], "{&*!%@`|>"):
		return nil, fmt.Errorf("yaml: %q is outside the subset this reader reads", text)
	}
	return text, nil
}

func TestReadYAMLSubset(t *testing.T) {
	text := `# comment
name: campaign # trailing
on:
  schedule:
    - cron: "17 2 * * *"
list:
- a
- 'it''s'
nums: [0, 1, "two"]
empty: {}
items:
  - name: x
    value: "4"
  -
    name: y
args:
  - |
    echo "$1"
  - plain
script: |
  set -u
  # kept: inside a literal
    indented

after: done
---
second: doc
`
	docs, err := readYAML(text)
	require.NoError(t, err)
	require.Equal(t, []any{
		map[string]any{
			"name":   "campaign",
			"on":     map[string]any{"schedule": []any{map[string]any{"cron": "17 2 * * *"}}},
			"list":   []any{"a", "it's"},
			"nums":   []any{"0", "1", "two"},
			"empty":  map[string]any{},
			"items":  []any{map[string]any{"name": "x", "value": "4"}, map[string]any{"name": "y"}},
			"script": "set -u\n# kept: inside a literal\n  indented\n",
			"after":  "done",
			"args":   []any{"echo \"$1\"\n", "plain"},
		},
		map[string]any{"second": "doc"},
	}, docs)

	for _, bad := range []string{"a: 1\na: 2\n", "a: 1\n   b: 2\n", "a: &anchor x\n", "just text\n", "a:\n  b: 1\n    c: 2\n"} {
		_, err := readYAML(bad)
		require.Error(t, err, "%q", bad)
	}
}
