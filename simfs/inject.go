package simfs

import (
	"path"
	"strconv"
	"strings"
	"syscall"
)

// OpKind names an FS or File operation, for fault injection.
type OpKind int

// The operations an Injector sees. Lstat, Stat and File.Stat are all OpStat;
// MkdirTemp is OpMkdir (once per attempted name); RenameNoReplace is OpRename.
const (
	OpOpen OpKind = iota
	OpRead
	OpWrite
	OpSync
	OpMkdir
	OpRename
	OpLink
	OpSymlink
	OpRemove
	OpReadDir
	OpStat
	OpReadlink
	OpChmod
	// OpLock is flock(2) and fcntl(2)'s record-lock commands.
	OpLock
	// OpChtimes is utimensat(2) (Chtimes).
	OpChtimes
	// OpTruncate is truncate(2) and ftruncate(2).
	OpTruncate
	opKindCount
)

var opKindNames = [opKindCount]string{
	"open", "read", "write", "sync", "mkdir", "rename", "link", "symlink",
	"remove", "readdir", "stat", "readlink", "chmod", "lock", "chtimes", "truncate",
}

// String returns the lower-case name of the operation ("sync").
func (k OpKind) String() string {
	if k < 0 || k >= opKindCount {
		return "op(" + strconv.Itoa(int(k)) + ")"
	}
	return opKindNames[k]
}

// Op is one operation as the injector sees it, before it runs.
type Op struct {
	Kind OpKind
	// Path is the path the operation names (for a File operation, the name
	// it was opened with; for Symlink, the new link).
	Path string
	// Path2 is the second path: Rename's and Link's new name, Symlink's
	// target.
	Path2 string
	// UID is the uid of the calling view.
	UID uint32
}

// String renders the operation for traces: "rename /a /b".
func (op Op) String() string {
	s := op.Kind.String() + " " + op.Path
	if op.Path2 != "" {
		s += " " + op.Path2
	}
	return s
}

// Injector decides, before each operation, whether it fails. A non-nil
// result must be a syscall.Errno; the operation then fails with it, wrapped
// as the operation wraps its errors, and has no effect (except the Linux
// writeback semantics of EIO and ENOSPC on OpSync).
type Injector interface {
	Inject(op Op) error
	String() string
}

// Predicate is a condition on an operation. Predicates may keep state
// (OnIndex counts), so evaluation order matters: And evaluates left to
// right and stops at the first false.
type Predicate interface {
	Eval(op Op) bool
	String() string
}

// Rule fails matching operations with Errno.
type Rule struct {
	Errno syscall.Errno
	When  Predicate
}

// String prints the rule as `(EIO (Op sync))`.
func (r Rule) String() string {
	return "(" + errnoName(r.Errno) + " " + r.When.String() + ")"
}

// Rules is an Injector: the first rule whose predicate holds decides.
type Rules []Rule

// Inject returns the errno of the first matching rule, or nil.
func (rs Rules) Inject(op Op) error {
	for _, r := range rs {
		if r.When.Eval(op) {
			return r.Errno
		}
	}
	return nil
}

// String prints the rules one per line.
func (rs Rules) String() string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(r.String())
	}
	return b.String()
}

// errnoName is the symbolic name of the errnos simfs deals in.
func errnoName(e syscall.Errno) string {
	if name, ok := errnoNames[e]; ok {
		return name
	}
	return "errno" + strconv.Itoa(int(e))
}

// ErrnoName returns the symbolic name of e ("ENOENT"), or "errnoN".
func ErrnoName(e syscall.Errno) string { return errnoName(e) }

var errnoNames = map[syscall.Errno]string{
	syscall.EPERM: "EPERM", syscall.ENOENT: "ENOENT", syscall.EIO: "EIO",
	syscall.EBADF: "EBADF", syscall.EACCES: "EACCES", syscall.EBUSY: "EBUSY",
	syscall.EEXIST: "EEXIST", syscall.EXDEV: "EXDEV", syscall.ENOTDIR: "ENOTDIR",
	syscall.EISDIR: "EISDIR", syscall.EINVAL: "EINVAL", syscall.ENOSPC: "ENOSPC",
	syscall.EROFS: "EROFS", syscall.EMLINK: "EMLINK", syscall.ENAMETOOLONG: "ENAMETOOLONG",
	syscall.ENOTEMPTY: "ENOTEMPTY", syscall.ELOOP: "ELOOP", syscall.EDQUOT: "EDQUOT",
	syscall.EINTR: "EINTR", syscall.EAGAIN: "EAGAIN",
}

// OnOp holds for operations of the given kinds. Prints as (Op sync write).
func OnOp(kinds ...OpKind) Predicate { return onOp(kinds) }

type onOp []OpKind

func (p onOp) Eval(op Op) bool {
	for _, k := range p {
		if op.Kind == k {
			return true
		}
	}
	return false
}

func (p onOp) String() string {
	var b strings.Builder
	b.WriteString("(Op")
	for _, k := range p {
		b.WriteByte(' ')
		b.WriteString(k.String())
	}
	b.WriteByte(')')
	return b.String()
}

// PathMatch holds when path.Match(pattern, ...) matches the operation's
// Path or its final element (so "*.json" matches "/d/x.json").
func PathMatch(pattern string) Predicate {
	if _, err := path.Match(pattern, ""); err != nil {
		panic("simfs: bad PathMatch pattern " + strconv.Quote(pattern))
	}
	return pathMatch(pattern)
}

type pathMatch string

func (p pathMatch) Eval(op Op) bool {
	if ok, _ := path.Match(string(p), op.Path); ok {
		return true
	}
	ok, _ := path.Match(string(p), path.Base(op.Path))
	return ok
}

func (p pathMatch) String() string { return "(PathMatch " + strconv.Quote(string(p)) + ")" }

// OnIndex holds on the index-th time it is evaluated (counting from 0) and
// never again, as Pebble's errorfs.OnIndex.
func OnIndex(index int) Predicate { return &onIndex{index: index} }

type onIndex struct {
	index int
	seen  int
}

func (p *onIndex) Eval(Op) bool {
	p.seen++
	return p.seen-1 == p.index
}

func (p *onIndex) String() string { return "(OnIndex " + strconv.Itoa(p.index) + ")" }

// And holds when every predicate holds; it evaluates left to right and stops
// at the first false one.
func And(preds ...Predicate) Predicate { return and(preds) }

type and []Predicate

func (p and) Eval(op Op) bool {
	for _, q := range p {
		if !q.Eval(op) {
			return false
		}
	}
	return true
}

func (p and) String() string { return listString("And", p) }

// Or holds when any predicate holds; it evaluates left to right and stops at
// the first true one.
func Or(preds ...Predicate) Predicate { return or(preds) }

type or []Predicate

func (p or) Eval(op Op) bool {
	for _, q := range p {
		if q.Eval(op) {
			return true
		}
	}
	return false
}

func (p or) String() string { return listString("Or", p) }

func listString(name string, preds []Predicate) string {
	var b strings.Builder
	b.WriteString("(" + name)
	for _, q := range preds {
		b.WriteByte(' ')
		b.WriteString(q.String())
	}
	b.WriteByte(')')
	return b.String()
}

// Probability holds with probability permille/1000, drawn from choose (one
// Intn(1000) per evaluation, so the simulator records it).
func Probability(permille int, choose Chooser) Predicate {
	if permille < 0 || permille > 1000 {
		panic("simfs: Probability permille out of [0, 1000]")
	}
	return &probability{permille: permille, choose: choose}
}

type probability struct {
	permille int
	choose   Chooser
}

func (p *probability) Eval(Op) bool { return p.choose.Intn(1000) < p.permille }

func (p *probability) String() string {
	return "(Probability " + strconv.Itoa(p.permille) + "/1000)"
}
