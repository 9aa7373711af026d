package hostile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/internal/statecas"
	"github.com/leasekit/leasekit/lease"
	"github.com/leasekit/leasekit/lease/leasetest"
	"github.com/leasekit/leasekit/lease/osenv"
	"github.com/leasekit/leasekit/simfs"
)

// corpusDir is the hostile corpus, relative to this package.
const corpusDir = "../testdata/hostile"

// Bounds of the harness itself: a corpus state is small.
const (
	treeEntriesMax = 4096
	fileBytesMax   = 1 << 22
	simUID         = 1000
	otherUID       = 4242
)

// pathAliases shorten the engines' deep directories in manifests.
var pathAliases = []struct{ alias, rel string }{
	{"$ADM", "home/recovery/beeper-message-like-me-export-admission"},
	{"$DL", "home/recovery/beeper-message-like-me-directory-leases"},
	{"$OUT", "outside"},
}

// backend is one place a state is built: the real OS or a fresh simfs.
type backend struct {
	name string
	// admin sets states up and walks trees (root on the real OS, uid 0 in
	// simfs); engine is what the engines get (the current uid).
	admin, engine lease.FS
	base          string
	selfUID       int
	sim           *simfs.FS
	// mkfifo is nil where FIFOs cannot be made (simfs has no mknod).
	mkfifo func(name string) error
	// chown gives name to uid, or explains why it cannot.
	chown   func(name string, uid int) error
	scratch int
}

func realBackend(t *testing.T) *backend {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fsys := osenv.NewFS()
	return &backend{
		name: "real", admin: fsys, engine: fsys, base: base, selfUID: os.Getuid(),
		mkfifo: func(name string) error { return unix.Mkfifo(name, 0o600) },
		chown: func(name string, uid int) error {
			if os.Getuid() != 0 {
				return errNeedRoot
			}
			return os.Lchown(name, uid, -1)
		},
	}
}

var errNeedRoot = errors.New("chown to another uid needs root on the real OS")

func simBackend() *backend { return simBackendWith(simfs.Options{Dev: 77}) }

func simBackendWith(options simfs.Options) *backend {
	sim := simfs.New(options)
	sim.MkdirAll("/base", 0o700, simUID)
	sim.MkdirAll("/scratch", 0o777, 0)
	b := &backend{name: "simfs", admin: sim.View(0), engine: sim.View(simUID), base: "/base", selfUID: simUID, sim: sim}
	b.chown = b.simChown
	return b
}

// simChown moves name to a fresh inode owned by uid: simfs has no chown,
// so another uid's view recreates it in a scratch directory (a plain file
// or an empty directory) and root renames it into place.
func (b *backend) simChown(name string, uid int) error {
	info, err := b.admin.Lstat(name)
	if err != nil {
		return err
	}
	other := b.sim.View(uint32(uid))
	b.scratch++
	temp := fmt.Sprintf("/scratch/%d", b.scratch)
	switch {
	case info.IsDir():
		entries, err := b.admin.ReadDir(name)
		if err != nil || len(entries) > 0 {
			return fmt.Errorf("simfs chown of %s: only an empty directory (%v)", name, err)
		}
		if err := other.Mkdir(temp, 0o700); err != nil {
			return err
		}
	case info.IsRegular():
		data, err := readAll(b.admin, name)
		if err != nil {
			return err
		}
		if err := writeFile(other, temp, data); err != nil {
			return err
		}
	default:
		return fmt.Errorf("simfs chown of %s: unsupported type %v", name, info.Mode)
	}
	if err := other.Chmod(temp, info.Perm()); err != nil {
		return err
	}
	if err := b.admin.Remove(name); err != nil {
		return err
	}
	return b.admin.Rename(temp, name)
}

// abs turns a manifest path (relative to the state's base, with aliases)
// into an absolute path.
func (b *backend) abs(rel string) string {
	for _, alias := range pathAliases {
		if rel == alias.alias || strings.HasPrefix(rel, alias.alias+"/") {
			rel = alias.rel + strings.TrimPrefix(rel, alias.alias)
		}
	}
	if rel == "." || rel == "" {
		return b.base
	}
	return path.Join(b.base, rel)
}

// relative expands aliases of a manifest path without making it absolute.
func relative(rel string) string {
	for _, alias := range pathAliases {
		if rel == alias.alias || strings.HasPrefix(rel, alias.alias+"/") {
			return alias.rel + strings.TrimPrefix(rel, alias.alias)
		}
	}
	return rel
}

func writeFile(fsys lease.FS, name string, data []byte) error {
	file, err := fsys.OpenFile(name, lease.O_WRONLY|lease.O_CREATE|lease.O_EXCL|lease.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = file.Write(data)
	return errors.Join(err, file.Close())
}

func readAll(fsys lease.FS, name string) ([]byte, error) {
	file, err := fsys.OpenFile(name, lease.O_RDONLY|lease.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, fileBytesMax+1))
	if err == nil && len(data) > fileBytesMax {
		err = fmt.Errorf("%s: over the harness bound", name)
	}
	return data, err
}

// mkdirAll makes name and its missing parents (parents 0700).
func (b *backend) mkdirAll(name string, perm fs.FileMode) error {
	if name == b.base {
		return nil
	}
	if _, err := b.admin.Lstat(name); err == nil {
		return nil
	}
	if err := b.mkdirAll(path.Dir(name), 0o700); err != nil {
		return err
	}
	if err := b.engine.Mkdir(name, 0o700); err != nil {
		return err
	}
	return b.admin.Chmod(name, perm)
}

// step is one manifest line.
type step struct {
	line int
	verb string
	args []string
	// text is the raw remainder after the verb (for text: contents).
	text string
}

// state is one parsed corpus manifest.
type state struct {
	engine, name, dir string
	summary           string
	covers            []string
	bug               string
	skipSim           string
	processes         map[int]string
	setup             []step
	hooks             []step
	op                []string
	expect            []string
	texts             []string
	allows            []string
	moves             [][2]string
}

func (s *state) id() string { return s.engine + "/" + s.name }

func loadCorpus(t *testing.T) []*state {
	t.Helper()
	manifests, err := filepath.Glob(filepath.Join(corpusDir, "*", "*", "state.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(manifests)
	states := make([]*state, 0, len(manifests))
	for _, manifest := range manifests {
		s, err := parseState(manifest)
		if err != nil {
			t.Fatalf("%s: %v", manifest, err)
		}
		states = append(states, s)
	}
	return states
}

var setupVerbs = map[string]bool{"dir": true, "file": true, "big": true, "symlink": true, "fifo": true,
	"chmod": true, "chown": true, "fill": true, "rename": true}

func parseState(manifest string) (*state, error) {
	content, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(manifest)
	s := &state{engine: filepath.Base(filepath.Dir(dir)), name: filepath.Base(dir), dir: dir, processes: map[int]string{}}
	scanner := bufio.NewScanner(bytes.NewReader(content))
	for number := 1; scanner.Scan(); number++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			if s.summary == "" {
				s.summary = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			}
			continue
		}
		fields := strings.Fields(line)
		verb, args := fields[0], fields[1:]
		text := strings.TrimSpace(strings.TrimPrefix(line, verb))
		if err := s.add(step{line: number, verb: verb, args: args, text: text}); err != nil {
			return nil, fmt.Errorf("line %d: %v", number, err)
		}
	}
	switch {
	case s.op == nil:
		return nil, errors.New("no op line")
	case s.expect == nil:
		return nil, errors.New("no expect line")
	}
	return s, scanner.Err()
}

func (s *state) add(st step) error {
	need := func(n int) error {
		if len(st.args) < n {
			return fmt.Errorf("%s needs %d arguments", st.verb, n)
		}
		return nil
	}
	switch {
	case setupVerbs[st.verb]:
		s.setup = append(s.setup, st)
		return need(1)
	case st.verb == "covers":
		s.covers = append(s.covers, st.args...)
	case st.verb == "bug":
		s.bug = st.text
	case st.verb == "skip-sim":
		s.skipSim = st.text
	case st.verb == "process":
		if err := need(2); err != nil {
			return err
		}
		pid, err := strconv.Atoi(st.args[0])
		if err != nil {
			return err
		}
		s.processes[pid] = st.args[1]
	case st.verb == "hook":
		s.hooks = append(s.hooks, st)
		return need(2)
	case st.verb == "op":
		s.op = st.args
		return need(1)
	case st.verb == "expect":
		s.expect = st.args
		return need(1)
	case st.verb == "expect-text":
		s.texts = append(s.texts, st.text)
	case st.verb == "allow":
		s.allows = append(s.allows, st.args...)
	case st.verb == "moved":
		if err := need(2); err != nil {
			return err
		}
		s.moves = append(s.moves, [2]string{relative(st.args[0]), relative(st.args[1])})
	default:
		return fmt.Errorf("unknown verb %q", st.verb)
	}
	return nil
}

// world is what a state's setup and operation share on one backend.
type world struct {
	t       *testing.T
	b       *backend
	s       *state
	self    lease.ProcessIdentity
	inspect *leasetest.Inspector
	// wrap, if set, wraps the FS every engine of this world gets.
	wrap func(lease.FS) lease.FS
}

// identity is the scripted identity of pid, running as the state's uid.
func (w *world) identity(pid int) lease.ProcessIdentity {
	id := leasetest.Identity(pid)
	id.UID = w.b.selfUID
	return id
}

func newWorld(t *testing.T, b *backend, s *state) *world {
	w := &world{t: t, b: b, s: s}
	w.self = w.identity(1)
	w.inspect = leasetest.NewInspector(w.self)
	for pid, status := range s.processes {
		switch status {
		case "live":
			w.inspect.SetLive(w.identity(pid))
		case "dead":
			w.inspect.Kill(pid)
		case "unknown":
			w.inspect.Set(pid, leasetest.Unknown("permission denied"))
		case "zombie":
			w.inspect.Set(pid, leasetest.Zombie(w.identity(pid), 1))
		default:
			t.Fatalf("%s: process %d: unknown status %q", s.id(), pid, status)
		}
	}
	return w
}

// unsupported reports why a state cannot run on this backend, or "".
func (w *world) unsupported() string {
	if w.b.sim != nil && w.s.skipSim != "" {
		return "simfs: " + w.s.skipSim
	}
	if w.b.sim == nil && os.Getuid() != 0 {
		for _, st := range w.s.setup {
			if st.verb == "chown" {
				return errNeedRoot.Error()
			}
		}
	}
	return ""
}

// setupOutside builds the tree every symlink in the corpus points into, so
// that the tree comparison proves nothing followed a planted link.
func (w *world) setupOutside() {
	b := w.b
	must(w.t, b.mkdirAll(b.abs("outside/dir"), 0o700))
	must(w.t, writeFile(b.engine, b.abs("outside/secret"), []byte("secret\n")))
	must(w.t, writeFile(b.engine, b.abs("outside/dir/inner"), []byte("inner\n")))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (w *world) apply() {
	w.setupOutside()
	for _, st := range w.s.setup {
		if err := w.applyStep(st); err != nil {
			w.t.Fatalf("%s line %d (%s): %v", w.s.id(), st.line, st.verb, err)
		}
	}
}

func (w *world) applyStep(st step) error {
	b := w.b
	name := b.abs(st.args[0])
	switch st.verb {
	case "dir":
		perm := fs.FileMode(0o700)
		if len(st.args) > 1 {
			mode, err := strconv.ParseUint(st.args[1], 8, 32)
			if err != nil {
				return err
			}
			perm = fs.FileMode(mode)
		}
		return b.mkdirAll(name, perm)
	case "file":
		data, err := w.content(st)
		if err != nil {
			return err
		}
		if err := b.mkdirAll(path.Dir(name), 0o700); err != nil {
			return err
		}
		return writeFile(b.engine, name, data)
	case "big":
		size, err := strconv.Atoi(st.args[1])
		if err != nil {
			return err
		}
		data := append([]byte(`{"schema":2,"pad":"`), bytes.Repeat([]byte("x"), size)...)
		if err := b.mkdirAll(path.Dir(name), 0o700); err != nil {
			return err
		}
		return writeFile(b.engine, name, append(data, "\"}\n"...))
	case "fill":
		count, err := strconv.Atoi(st.args[1])
		if err != nil {
			return err
		}
		if err := b.mkdirAll(name, 0o700); err != nil {
			return err
		}
		for i := 1; i <= count; i++ {
			file := path.Join(name, fmt.Sprintf("00000000-0000-4000-8000-%012x.json", i))
			if err := writeFile(b.engine, file, []byte("{}\n")); err != nil {
				return err
			}
		}
		return nil
	case "symlink":
		if len(st.args) != 3 || st.args[1] != "->" {
			return errors.New("symlink PATH -> TARGET")
		}
		target := st.args[2]
		if literal, ok := strings.CutPrefix(target, "rel:"); ok {
			target = literal
		} else {
			target = b.abs(target)
		}
		if err := b.mkdirAll(path.Dir(name), 0o700); err != nil {
			return err
		}
		return b.engine.Symlink(target, name)
	case "fifo":
		if b.mkfifo == nil {
			return errors.New("this backend cannot make a FIFO")
		}
		if err := b.mkdirAll(path.Dir(name), 0o700); err != nil {
			return err
		}
		return b.mkfifo(name)
	case "chmod":
		mode, err := strconv.ParseUint(st.args[1], 8, 32)
		if err != nil {
			return err
		}
		return b.admin.Chmod(name, fs.FileMode(mode))
	case "chown":
		return b.chown(name, otherUID)
	case "rename":
		return b.admin.Rename(name, b.abs(st.args[1]))
	}
	return fmt.Errorf("unknown setup verb %q", st.verb)
}

// content returns the bytes of a file step: "@name" reads a file beside the
// manifest, "text:..." takes the rest of the line (\n, \0, \t and \\
// escapes), "hex:..." decodes hex. Templates ${...} are then expanded.
func (w *world) content(st step) ([]byte, error) {
	spec := strings.TrimSpace(strings.TrimPrefix(st.text, st.args[0]))
	var data []byte
	switch {
	case strings.HasPrefix(spec, "@"):
		raw, err := os.ReadFile(filepath.Join(w.s.dir, spec[1:]))
		if err != nil {
			return nil, err
		}
		data = raw
	case strings.HasPrefix(spec, "text:"):
		data = []byte(unescape(spec[len("text:"):]))
	case strings.HasPrefix(spec, "hex:"):
		raw, err := hex.DecodeString(spec[len("hex:"):])
		if err != nil {
			return nil, err
		}
		data = raw
	default:
		return nil, fmt.Errorf("file content %q must start with @, text: or hex:", spec)
	}
	return w.expand(data)
}

func unescape(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\0`, "\x00", `\t`, "\t", `\\`, `\`).Replace(s)
}

var templatePattern = regexp.MustCompile(`\$\{([A-Z]+)(?::([^}]*))?\}`)

// expand replaces the templates of a record: ${BOOT} (the boot digest),
// ${START:pid} (the start digest of pid's scripted identity), ${UID},
// ${ABS:path} (an absolute path in the state) and ${IDENT:path} (the
// physical identity object of a directory in the state).
func (w *world) expand(data []byte) ([]byte, error) {
	var failure error
	out := templatePattern.ReplaceAllFunc(data, func(match []byte) []byte {
		parts := templatePattern.FindSubmatch(match)
		argument := string(parts[2])
		switch string(parts[1]) {
		case "BOOT":
			return []byte(statecas.BootDigest(w.self.BootID))
		case "START":
			pid, err := strconv.Atoi(argument)
			if err != nil {
				failure = err
				return nil
			}
			return []byte(statecas.StartDigest(w.identity(pid)))
		case "UID":
			return []byte(strconv.Itoa(w.b.selfUID))
		case "ABS":
			return []byte(w.b.abs(argument))
		case "IDENT":
			info, err := w.b.admin.Lstat(w.b.abs(argument))
			if err != nil {
				failure = err
				return nil
			}
			id, ok := info.Identity()
			if !ok {
				failure = fmt.Errorf("%s has no birth time", argument)
				return nil
			}
			return fmt.Appendf(nil, `{"birthtimeNs":"%d","device":"%d","inode":"%d"}`, id.BirthNs, id.Dev, id.Ino)
		}
		failure = fmt.Errorf("unknown template %s", match)
		return nil
	})
	return out, failure
}

// node is one entry of a tree snapshot: everything a hostile state must
// not see changed.
type node struct {
	Type   string
	Perm   fs.FileMode
	UID    uint32
	Ino    uint64
	Size   int64
	SHA    string
	Target string
}

func (n node) String() string {
	return fmt.Sprintf("%s %v uid=%d ino=%d size=%d sha=%.12s target=%q", n.Type, n.Perm, n.UID, n.Ino, n.Size, n.SHA, n.Target)
}

func typeName(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "symlink"
	case mode.IsDir():
		return "dir"
	case mode.IsRegular():
		return "file"
	case mode&fs.ModeNamedPipe != 0:
		return "fifo"
	}
	return "other"
}

// snapshot walks the state's base without following any symlink.
func snapshot(t *testing.T, b *backend) map[string]node {
	t.Helper()
	tree := map[string]node{}
	var walk func(rel string)
	walk = func(rel string) {
		if len(tree) > treeEntriesMax {
			t.Fatalf("tree over %d entries", treeEntriesMax)
		}
		name := b.abs(rel)
		info, err := b.admin.Lstat(name)
		must(t, err)
		n := node{Type: typeName(info.Mode), Perm: info.Perm(), UID: info.UID, Ino: info.Ino}
		switch n.Type {
		case "file":
			data, err := readAll(b.admin, name)
			must(t, err)
			sum := sha256.Sum256(data)
			n.Size, n.SHA = int64(len(data)), hex.EncodeToString(sum[:])
		case "symlink":
			n.Target, err = b.admin.Readlink(name)
			must(t, err)
		}
		tree[rel] = n
		if n.Type != "dir" {
			return
		}
		entries, err := b.admin.ReadDir(name)
		must(t, err)
		for _, entry := range entries {
			if rel == "." {
				walk(entry.Name)
			} else {
				walk(rel + "/" + entry.Name)
			}
		}
	}
	walk(".")
	return tree
}

// treeRules says which differences between two snapshots are documented.
type treeRules struct {
	// created are engine directories that may appear (each must be a 0700
	// directory of the current uid).
	created []string
	allows  []string
	moves   [][2]string
	uid     int
}

func (r treeRules) allowed(rel string) bool {
	for _, pattern := range r.allows {
		pattern = relative(pattern)
		if ok, _ := path.Match(pattern, rel); ok || strings.HasPrefix(rel, pattern+"/") {
			return true
		}
	}
	return false
}

// diffTrees lists every undocumented difference, sorted.
func diffTrees(before, after map[string]node, rules treeRules) []string {
	expected := map[string]node{}
	for rel, n := range before {
		for _, move := range rules.moves {
			if rel == move[0] || strings.HasPrefix(rel, move[0]+"/") {
				rel = move[1] + strings.TrimPrefix(rel, move[0])
			}
		}
		expected[rel] = n
	}
	var problems []string
	for rel, want := range expected {
		got, ok := after[rel]
		switch {
		case rules.allowed(rel):
		case !ok:
			problems = append(problems, "deleted: "+rel+" ("+want.String()+")")
		case got != want:
			problems = append(problems, "changed: "+rel+": "+want.String()+" -> "+got.String())
		}
	}
	for rel, got := range after {
		if _, ok := expected[rel]; ok || rules.allowed(rel) {
			continue
		}
		engineDir := false
		for _, created := range rules.created {
			engineDir = engineDir || relative(created) == rel
		}
		if engineDir && got.Type == "dir" && got.Perm == 0o700 && int(got.UID) == rules.uid {
			continue
		}
		problems = append(problems, "created: "+rel+" ("+got.String()+")")
	}
	sort.Strings(problems)
	return problems
}
