package hostile

import (
	"strings"
	"testing"
)

// TestHostileCorpus runs every state of the corpus (except the ones that
// document an engine bug, see corpus_bug_test.go) on the real OS and in
// simfs: the engine must return the typed refusal the manifest names, its
// message must contain every expect-text (the file and the problem), and
// the tree must be unchanged apart from what the manifest allows.
func TestHostileCorpus(t *testing.T) {
	for _, s := range loadCorpus(t) {
		if s.bug != "" {
			t.Logf("%s documents engine bug %q: run with -tags leasekit_bugs", s.id(), s.bug)
			continue
		}
		runState(t, s)
	}
}

func runState(t *testing.T, s *state) {
	t.Run(s.id(), func(t *testing.T) {
		for _, newBackend := range []func(*testing.T) *backend{realBackend, func(*testing.T) *backend { return simBackend() }} {
			b := newBackend(t)
			t.Run(b.name, func(t *testing.T) {
				w := newWorld(t, b, s)
				if reason := w.unsupported(); reason != "" {
					t.Skip(reason)
				}
				w.apply()
				before := snapshot(t, b)
				got := w.run()
				after := snapshot(t, b)
				checkOutcome(t, s, got)
				rules := treeRules{created: createdDirs(s.engine), allows: s.allows, moves: s.moves, uid: b.selfUID}
				for _, problem := range diffTrees(before, after, rules) {
					t.Errorf("%s (%s): %s", s.id(), s.summary, problem)
				}
			})
		}
	})
}

func checkOutcome(t *testing.T, s *state, got outcome) {
	t.Helper()
	fields := []string{got.class, got.reason, got.detail}
	for i, want := range s.expect {
		if i >= len(fields) || (want != "*" && fields[i] != want) {
			t.Errorf("%s (%s): outcome %v, want %s", s.id(), s.summary, got, strings.Join(s.expect, " "))
			break
		}
	}
	if !got.typed {
		t.Errorf("%s: untyped outcome %v", s.id(), got)
	}
	for _, text := range s.texts {
		if !strings.Contains(got.message, text) {
			t.Errorf("%s (%s): message %q does not contain %q", s.id(), s.summary, got.message, text)
		}
	}
}

// coverage is issue 10's list of hostile states: every tag must be covered
// by at least one state of the corpus.
var coverage = []string{
	"truncated-json", "empty-json", "wrong-type", "unknown-field", "huge-file", "nul-bytes",
	"non-canonical", "legacy-bad-field", "receiver-lock-file", "receiver-lock-symlink",
	"receiver-lock-fifo", "owner-directory", "symlinked-namespace", "symlinked-quarantine",
	"group-writable", "world-writable", "other-uid", "dotdot-path", "relative-path",
	"swapped-during-recovery", "corrupt-guard", "corrupt-intent", "claims-over-limit",
}

// TestCorpusShape checks the corpus itself: at least 60 states, spread
// over the three engines, every state naming its file and its problem
// (two expect-text lines at least), and every bullet of issue 10 covered.
func TestCorpusShape(t *testing.T) {
	states := loadCorpus(t)
	perEngine := map[string]int{}
	covered := map[string]bool{}
	running := 0
	for _, s := range states {
		perEngine[s.engine]++
		for _, tag := range s.covers {
			covered[tag] = true
		}
		if s.bug == "" {
			running++
		}
		if len(s.texts) < 2 {
			t.Errorf("%s: needs an expect-text for the file and one for the problem", s.id())
		}
		if len(s.covers) == 0 {
			t.Errorf("%s: names no covers tag", s.id())
		}
	}
	t.Logf("corpus: %d states (%d run by default), per engine %v", len(states), running, perEngine)
	if running < 60 {
		t.Errorf("corpus has %d states run by default, want at least 60", running)
	}
	for _, engine := range []string{"lease", "admission", "dirlease"} {
		if perEngine[engine] < 15 {
			t.Errorf("engine %s has %d states, want at least 15", engine, perEngine[engine])
		}
	}
	for _, tag := range coverage {
		if !covered[tag] {
			t.Errorf("no state covers %q", tag)
		}
	}
}
