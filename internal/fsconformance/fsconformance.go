// Package fsconformance is one conformance suite for lease.FS
// implementations. simfs runs it against itself and against the kernel
// (lease/osenv in t.TempDir()), so the simulated filesystem cannot drift from
// Linux: every step's observable result (errno name, contents, link counts,
// and whether an identity is the same as an earlier one or new) must equal
// the golden result written in the script, on both.
//
// A script is one step per line: `verb args... => want`. Paths are relative
// to the root the factory returns. Identities print as letters: the first
// identity (dev, ino, birth) seen in a scenario is A, the next new one B, and
// so on, so "same identity as before" and "new identity" are visible without
// raw inode numbers. Scenarios avoid permission checks (CI runs as root, and
// root bypasses DAC on the kernel); simfs tests those with a non-zero uid.
package fsconformance

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasekit/leasekit/lease"
)

// Scenario is one named script.
type Scenario struct {
	Name   string
	Script string
}

// Run runs every scenario on a fresh filesystem from newFS. root is an
// existing, empty directory (absolute, clean) the scenario works in.
func Run(t *testing.T, newFS func(t *testing.T) (fsys lease.FS, root string)) {
	t.Helper()
	for _, sc := range Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			fsys, root := newFS(t)
			r := &runner{fsys: fsys, root: root, ids: map[lease.FileIdentity]string{},
				held: map[string]lease.File{}}
			defer r.closeHeld()
			for lineNo, line := range strings.Split(strings.TrimSpace(sc.Script), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				cmd, want, ok := strings.Cut(line, " => ")
				if !ok {
					t.Fatalf("line %d: no ' => ' in %q", lineNo+1, line)
				}
				if got := r.step(t, strings.Fields(cmd)); !Matches(got, want) {
					t.Errorf("line %d: %s\n got: %s\nwant: %s", lineNo+1, cmd, got, want)
				}
			}
		})
	}
}

// Matches reports whether a step's result got is what the script wants.
// Two variations between Linux filesystems are allowed, both measured by
// .ci/realfs (docs/REALSTRESS.md, "Real filesystems"), neither one the
// engines depend on:
//   - want may list alternatives, "A | B": POSIX lets rename(2) of a
//     directory over a non-empty one fail with ENOTEMPTY or EEXIST; ext4,
//     btrfs and tmpfs say ENOTEMPTY, xfs says EEXIST (lease.FS maps both to
//     fs.ErrExist).
//   - a directory's nlink of 1 matches any count: btrfs does not count a
//     directory's subdirectories and always reports 1, the Linux convention
//     for "not counted" (find(1) relies on it). simfs counts, as ext4 does.
func Matches(got, want string) bool {
	for _, alternative := range strings.Split(want, " | ") {
		if got == alternative || uncountedDirLinks(got, alternative) {
			return true
		}
	}
	return false
}

// uncountedDirLinks: got is a directory with nlink=1 and otherwise equal to
// want, a directory with any nlink.
func uncountedDirLinks(got, want string) bool {
	rest, ok := strings.CutPrefix(got, "dir nlink=1 ")
	if !ok || !strings.HasPrefix(want, "dir nlink=") {
		return false
	}
	_, wantRest, ok := strings.Cut(strings.TrimPrefix(want, "dir nlink="), " ")
	return ok && rest == wantRest
}

type runner struct {
	fsys lease.FS
	root string
	ids  map[lease.FileIdentity]string
	held map[string]lease.File
}

func (r *runner) closeHeld() {
	for _, name := range sortedKeys(r.held) {
		r.held[name].Close()
	}
}

func sortedKeys(m map[string]lease.File) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func (r *runner) path(rel string) string { return r.root + "/" + rel }

// Open flag sets the verbs use.
const (
	flagWrite  = lease.O_WRONLY | lease.O_CREATE | lease.O_TRUNC
	flagAppend = lease.O_WRONLY | lease.O_CREATE | lease.O_APPEND
	flagExcl   = lease.O_WRONLY | lease.O_CREATE | lease.O_EXCL
)

// step runs one verb and renders its observable result.
func (r *runner) step(t *testing.T, args []string) string {
	verb, a := args[0], args[1:]
	arg := func(i int) string {
		if i >= len(a) {
			t.Fatalf("%s: missing argument %d", verb, i+1)
		}
		return a[i]
	}
	switch verb {
	case "mkdir":
		return r.result(r.fsys.Mkdir(r.path(arg(0)), 0o700))
	case "write":
		return r.writeFile(arg(0), flagWrite, strings.Join(a[1:], " "))
	case "append":
		return r.writeFile(arg(0), flagAppend, strings.Join(a[1:], " "))
	case "create-excl":
		return r.openClose(arg(0), flagExcl)
	case "open-trunc":
		return r.openClose(arg(0), lease.O_WRONLY|lease.O_TRUNC)
	case "open-nofollow":
		return r.openClose(arg(0), lease.O_RDONLY|lease.O_NOFOLLOW)
	case "open-dir":
		return r.openClose(arg(0), lease.O_RDONLY|lease.O_DIRECTORY)
	case "open-dir-nofollow":
		return r.openClose(arg(0), lease.O_RDONLY|lease.O_DIRECTORY|lease.O_NOFOLLOW)
	case "open-dir-nofollow-write":
		return r.openClose(arg(0), lease.O_WRONLY|lease.O_DIRECTORY|lease.O_NOFOLLOW)
	case "open-write-nofollow":
		return r.openClose(arg(0), lease.O_WRONLY|lease.O_NOFOLLOW)
	case "open-write":
		return r.openClose(arg(0), lease.O_WRONLY)
	case "open-create":
		return r.openClose(arg(0), lease.O_RDONLY|lease.O_CREATE)
	case "open-create-nofollow":
		return r.openClose(arg(0), lease.O_WRONLY|lease.O_CREATE|lease.O_NOFOLLOW)
	case "open-rdonly-trunc":
		return r.openClose(arg(0), lease.O_RDONLY|lease.O_TRUNC)
	case "fsync":
		return r.fsync(arg(0))
	case "read":
		return r.read(arg(0))
	case "stat":
		info, err := r.fsys.Stat(r.path(arg(0)))
		return r.info(info, err)
	case "lstat":
		info, err := r.fsys.Lstat(r.path(arg(0)))
		return r.info(info, err)
	case "rename":
		return r.result(r.fsys.Rename(r.path(arg(0)), r.path(arg(1))))
	case "rename-noreplace":
		return r.result(r.fsys.RenameNoReplace(r.path(arg(0)), r.path(arg(1))))
	case "link":
		return r.result(r.fsys.Link(r.path(arg(0)), r.path(arg(1))))
	case "symlink":
		return r.result(r.fsys.Symlink(arg(0), r.path(arg(1))))
	case "readlink":
		target, err := r.fsys.Readlink(r.path(arg(0)))
		if err != nil {
			return r.result(err)
		}
		return strconv.Quote(target)
	case "remove":
		return r.result(r.fsys.Remove(r.path(arg(0))))
	case "readdir":
		return r.readDir(arg(0))
	case "chmod":
		mode, err := strconv.ParseUint(arg(1), 8, 32)
		if err != nil {
			t.Fatalf("chmod: bad mode %q", arg(1))
		}
		return r.result(r.fsys.Chmod(r.path(arg(0)), fs.FileMode(mode)))
	case "hold":
		f, err := r.fsys.OpenFile(r.path(arg(0)), lease.O_RDWR, 0)
		if err != nil {
			return r.result(err)
		}
		r.held[arg(0)] = f
		return "ok"
	case "opendir":
		f, err := r.fsys.OpenFile(r.path(arg(0)), lease.O_RDONLY|lease.O_DIRECTORY|lease.O_NOFOLLOW, 0)
		if err != nil {
			return r.result(err)
		}
		r.held[arg(0)] = f
		return "ok"
	case "hold-as", "flock", "setlk", "getlk", "ofd-setlk", "ofd-getlk", "setlkw", "ofd-setlkw":
		return r.lockStep(t, verb, a)
	case "at-readdir", "at-stat", "at-remove", "at-rmdir", "at-create", "at-open-dir", "at-read":
		return r.atStep(t, verb, arg(0), a[1:])
	case "chtimes", "chtimes-omit", "chtimes-mtime-omit", "mtime", "truncate",
		"fmtime", "fseek", "freadat", "ftruncate", "fwrite-at":
		return r.timesStep(t, verb, a)
	case "fstat", "fread", "fwrite", "fclose":
		return r.heldStep(t, verb, arg(0), strings.Join(a[1:], " "))
	case "tick":
		// ext4 birth times come from a coarse clock (one jiffy, at most
		// 10 ms): wait so that a later inode cannot share a birth time.
		time.Sleep(20 * time.Millisecond)
		return "ok"
	}
	t.Fatalf("unknown verb %q", verb)
	return ""
}

func (r *runner) writeFile(rel string, flag lease.OpenFlag, data string) string {
	f, err := r.fsys.OpenFile(r.path(rel), flag, 0o600)
	if err != nil {
		return r.result(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		f.Close()
		return r.result(err)
	}
	return r.result(f.Close())
}

func (r *runner) openClose(rel string, flag lease.OpenFlag) string {
	f, err := r.fsys.OpenFile(r.path(rel), flag, 0o600)
	if err != nil {
		return r.result(err)
	}
	return r.result(f.Close())
}

func (r *runner) fsync(rel string) string {
	f, err := r.fsys.OpenFile(r.path(rel), lease.O_RDONLY, 0)
	if err != nil {
		return r.result(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return r.result(err)
	}
	return r.result(f.Close())
}

func (r *runner) read(rel string) string {
	f, err := r.fsys.OpenFile(r.path(rel), lease.O_RDONLY, 0)
	if err != nil {
		return r.result(err)
	}
	defer f.Close()
	return r.readAll(f)
}

// readsMax bounds a read loop; the scripts' files are tiny.
const readsMax = 1000

func (r *runner) readAll(f lease.File) string {
	var out []byte
	buf := make([]byte, 7) // small, so reads take several calls
	for reads := 0; reads < readsMax; reads++ {
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return strconv.Quote(string(out))
		}
		if err != nil {
			return r.result(err)
		}
	}
	return "read did not reach EOF"
}

func (r *runner) readDir(rel string) string {
	entries, err := r.fsys.ReadDir(r.path(rel))
	return r.entries(entries, err)
}

// entries renders a listing: directories with "/", symlinks with "@".
func (r *runner) entries(entries []lease.DirEntry, err error) string {
	if err != nil {
		return r.result(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		switch {
		case e.Type.IsDir():
			names = append(names, e.Name+"/")
		case e.Type&fs.ModeSymlink != 0:
			names = append(names, e.Name+"@")
		default:
			names = append(names, e.Name)
		}
	}
	return "[" + strings.Join(names, " ") + "]"
}

func (r *runner) heldStep(t *testing.T, verb, rel, data string) string {
	f, ok := r.held[rel]
	if !ok {
		t.Fatalf("%s %s: not held", verb, rel)
	}
	switch verb {
	case "fstat":
		info, err := f.Stat()
		return r.info(info, err)
	case "fread":
		return r.readAll(f)
	case "fwrite":
		_, err := f.Write([]byte(data))
		return r.result(err)
	}
	delete(r.held, rel)
	return r.result(f.Close())
}

// atStep runs a directory-handle verb on the handle held as rel (opendir).
func (r *runner) atStep(t *testing.T, verb, rel string, a []string) string {
	dir, ok := r.held[rel]
	if !ok {
		t.Fatalf("%s %s: not held", verb, rel)
	}
	if verb == "at-readdir" {
		entries, err := dir.ReadDir()
		return r.entries(entries, err)
	}
	if len(a) != 1 {
		t.Fatalf("%s %s: want one name", verb, rel)
	}
	name := a[0]
	switch verb {
	case "at-stat":
		info, err := dir.StatAt(name)
		return r.info(info, err)
	case "at-remove":
		return r.result(dir.RemoveAt(name, false))
	case "at-rmdir":
		return r.result(dir.RemoveAt(name, true))
	}
	flag := lease.O_RDONLY | lease.O_NOFOLLOW
	switch verb {
	case "at-create":
		flag = lease.O_WRONLY | lease.O_CREATE | lease.O_EXCL | lease.O_NOFOLLOW
	case "at-open-dir":
		flag = lease.O_RDONLY | lease.O_DIRECTORY | lease.O_NOFOLLOW
	}
	f, err := dir.OpenAt(name, flag, 0o600)
	if err != nil {
		return r.result(err)
	}
	defer f.Close()
	if verb == "at-read" {
		return r.readAll(f)
	}
	return "ok"
}

// info renders the observable part of a FileInfo.
func (r *runner) info(info lease.FileInfo, err error) string {
	if err != nil {
		return r.result(err)
	}
	id, ok := info.Identity()
	letter := "none"
	if ok {
		letter, ok = r.ids[id]
		if !ok {
			letter = string(rune('A' + len(r.ids)))
			r.ids[id] = letter
		}
	}
	switch {
	case info.IsDir():
		return "dir nlink=" + strconv.FormatUint(info.Nlink, 10) +
			" perm=" + strconv.FormatUint(uint64(info.Perm()), 8) + " id=" + letter
	case info.IsSymlink():
		return "symlink size=" + strconv.FormatInt(info.Size, 10) + " id=" + letter
	case info.IsRegular():
		return "file nlink=" + strconv.FormatUint(info.Nlink, 10) + " size=" +
			strconv.FormatInt(info.Size, 10) + " perm=" +
			strconv.FormatUint(uint64(info.Perm()), 8) + " id=" + letter
	}
	return "other mode=" + info.Mode.String()
}

// result renders nil as "ok" and an error as its errno name, checking that
// it has the shape the os package gives it.
func (r *runner) result(err error) string {
	if err == nil {
		return "ok"
	}
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	if !errors.As(err, &pathErr) && !errors.As(err, &linkErr) {
		return "not-a-path-or-link-error(" + err.Error() + ")"
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return "not-an-errno(" + err.Error() + ")"
	}
	if name, ok := errnoNames[errno]; ok {
		return name
	}
	return "errno" + strconv.Itoa(int(errno))
}

var errnoNames = map[syscall.Errno]string{
	syscall.EPERM: "EPERM", syscall.ENOENT: "ENOENT", syscall.EIO: "EIO",
	syscall.EBADF: "EBADF", syscall.EACCES: "EACCES", syscall.EBUSY: "EBUSY",
	syscall.EEXIST: "EEXIST", syscall.EXDEV: "EXDEV", syscall.ENOTDIR: "ENOTDIR",
	syscall.EISDIR: "EISDIR", syscall.EINVAL: "EINVAL", syscall.ENOSPC: "ENOSPC",
	syscall.ENOTEMPTY: "ENOTEMPTY", syscall.ELOOP: "ELOOP", syscall.EMLINK: "EMLINK",
	syscall.ENAMETOOLONG: "ENAMETOOLONG", syscall.EAGAIN: "EAGAIN", syscall.EDEADLK: "EDEADLK",
}
