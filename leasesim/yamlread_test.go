package leasesim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

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
