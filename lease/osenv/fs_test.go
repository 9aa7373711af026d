package osenv

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leasekit/leasekit/internal/require"
	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/lease"
)

// requirePathError asserts err is exactly what the os package would return
// for a one-path failure: *fs.PathError{op, path, errno}.
func requirePathError(t *testing.T, err error, op, path string, errno syscall.Errno) {
	t.Helper()
	var pathErr *fs.PathError
	require.ErrorAs(t, err, &pathErr, "want *fs.PathError, got %T: %v", err, err)
	require.Equal(t, op, pathErr.Op)
	require.Equal(t, path, pathErr.Path)
	require.Equal(t, errno, pathErr.Err, "errno of %v", err)
	require.ErrorIs(t, err, errno)
}

// requireLinkError asserts err is an *os.LinkError{op, old, new, errno}.
func requireLinkError(t *testing.T, err error, op, oldpath, newpath string, errno syscall.Errno) {
	t.Helper()
	var linkErr *os.LinkError
	require.ErrorAs(t, err, &linkErr, "want *os.LinkError, got %T: %v", err, err)
	require.Equal(t, op, linkErr.Op)
	require.Equal(t, oldpath, linkErr.Old)
	require.Equal(t, newpath, linkErr.New)
	require.Equal(t, errno, linkErr.Err, "errno of %v", err)
	require.ErrorIs(t, err, errno)
}

func writeFile(t *testing.T, fsys lease.FS, name, content string) {
	t.Helper()
	file, err := fsys.OpenFile(name, lease.O_WRONLY|lease.O_CREATE|lease.O_EXCL, 0o600)
	require.NoError(t, err)
	n, err := file.Write([]byte(content))
	require.NoError(t, err)
	require.Equal(t, len(content), n)
	require.NoError(t, file.Sync())
	require.NoError(t, file.Close())
}

func readFile(t *testing.T, fsys lease.FS, name string) string {
	t.Helper()
	file, err := fsys.OpenFile(name, lease.O_RDONLY, 0)
	require.NoError(t, err)
	defer file.Close()
	data, err := io.ReadAll(file)
	require.NoError(t, err)
	return string(data)
}

func TestOpenFileErrors(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, fsys, file, "x")
	link := filepath.Join(dir, "link")
	require.NoError(t, fsys.Symlink(file, link))
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, fsys.Symlink(filepath.Join(dir, "nowhere"), dangling))

	cases := []struct {
		name  string
		path  string
		flag  lease.OpenFlag
		errno syscall.Errno
	}{
		{"missing", filepath.Join(dir, "missing"), lease.O_RDONLY, syscall.ENOENT},
		{"missing parent", filepath.Join(dir, "no", "file"), lease.O_WRONLY | lease.O_CREATE, syscall.ENOENT},
		{"create exclusive over file", file, lease.O_WRONLY | lease.O_CREATE | lease.O_EXCL, syscall.EEXIST},
		{"create exclusive over dangling symlink", dangling, lease.O_WRONLY | lease.O_CREATE | lease.O_EXCL, syscall.EEXIST},
		{"nofollow on symlink", link, lease.O_RDONLY | lease.O_NOFOLLOW, syscall.ELOOP},
		{"directory flag on file", file, lease.O_RDONLY | lease.O_DIRECTORY, syscall.ENOTDIR},
		{"file as parent", filepath.Join(file, "child"), lease.O_RDONLY, syscall.ENOTDIR},
		{"write a directory", dir, lease.O_WRONLY, syscall.EISDIR},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opened, err := fsys.OpenFile(tc.path, tc.flag, 0o600)
			require.Nil(t, opened)
			requirePathError(t, err, "open", tc.path, tc.errno)
		})
	}
	_, err := fsys.OpenFile(filepath.Join(dir, "missing"), lease.O_RDONLY, 0)
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = fsys.OpenFile(file, lease.O_WRONLY|lease.O_CREATE|lease.O_EXCL, 0o600)
	require.ErrorIs(t, err, fs.ErrExist)
}

func TestOpenFileFlags(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	name := filepath.Join(dir, "file")
	writeFile(t, fsys, name, "hello")

	appender, err := fsys.OpenFile(name, lease.O_WRONLY|lease.O_APPEND, 0)
	require.NoError(t, err)
	_, err = appender.Write([]byte(" world"))
	require.NoError(t, err)
	require.NoError(t, appender.Close())
	require.Equal(t, "hello world", readFile(t, fsys, name))

	truncator, err := fsys.OpenFile(name, lease.O_RDWR|lease.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = truncator.Write([]byte("new"))
	require.NoError(t, err)
	require.NoError(t, truncator.Close())
	require.Equal(t, "new", readFile(t, fsys, name))

	created := filepath.Join(dir, "created")
	file, err := fsys.OpenFile(created, lease.O_RDWR|lease.O_CREATE|lease.O_EXCL, 0o640)
	require.NoError(t, err)
	defer file.Close()
	require.Equal(t, created, file.Name())
	flags, err := unix.FcntlInt(uintptr(file.(*File).fd), unix.F_GETFD, 0)
	require.NoError(t, err)
	require.NotZero(t, flags&unix.FD_CLOEXEC, "every fd must be close-on-exec")
	info, err := file.Stat()
	require.NoError(t, err)
	require.True(t, info.IsRegular())
	require.Equal(t, fs.FileMode(0o640), info.Perm()&0o640, "umask only narrows")
	require.Zero(t, info.Perm()&^0o640)
}

func TestFileReadWriteStatClose(t *testing.T) {
	fsys := NewFS()
	name := filepath.Join(t.TempDir(), "file")
	payload := make([]byte, 1<<20) // large enough to exercise the write loop
	for i := range payload {
		payload[i] = byte(i % 251)
	}
	file, err := fsys.OpenFile(name, lease.O_RDWR|lease.O_CREATE|lease.O_EXCL, 0o600)
	require.NoError(t, err)
	n, err := file.Write(payload)
	require.NoError(t, err)
	require.Equal(t, len(payload), n)
	require.NoError(t, file.Sync())

	info, err := file.Stat()
	require.NoError(t, err)
	require.Equal(t, "file", info.Name)
	require.Equal(t, int64(len(payload)), info.Size)
	require.Equal(t, uint64(1), info.Nlink)
	require.Equal(t, uint32(os.Getuid()), info.UID)
	byPath, err := fsys.Lstat(name)
	require.NoError(t, err)
	require.Equal(t, byPath, info, "fstat and lstat must agree")
	require.NoError(t, file.Close())

	require.Equal(t, string(payload), readFile(t, fsys, name))
	reader, err := fsys.OpenFile(name, lease.O_RDONLY, 0)
	require.NoError(t, err)
	_, err = reader.Write([]byte("x"))
	requirePathError(t, err, "write", name, syscall.EBADF)
	require.NoError(t, reader.Close())

	closedErrors := []struct {
		op   string
		call func() error
	}{
		{"close", reader.Close},
		{"read", func() error { _, err := reader.Read(make([]byte, 1)); return err }},
		{"write", func() error { _, err := reader.Write([]byte("x")); return err }},
		{"sync", reader.Sync},
		{"stat", func() error { _, err := reader.Stat(); return err }},
	}
	for _, tc := range closedErrors {
		requirePathError(t, tc.call(), tc.op, name, syscall.EBADF)
	}
}

func TestFileReadEOF(t *testing.T) {
	fsys := NewFS()
	name := filepath.Join(t.TempDir(), "empty")
	writeFile(t, fsys, name, "")
	file, err := fsys.OpenFile(name, lease.O_RDONLY, 0)
	require.NoError(t, err)
	defer file.Close()
	n, err := file.Read(make([]byte, 8))
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF)
}

func TestDirectorySync(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	writeFile(t, fsys, filepath.Join(dir, "entry"), "x")
	handle, err := fsys.OpenFile(dir, lease.O_RDONLY|lease.O_DIRECTORY, 0)
	require.NoError(t, err)
	require.NoError(t, handle.Sync())
	info, err := handle.Stat()
	require.NoError(t, err)
	require.True(t, info.IsDir())
	_, err = handle.Read(make([]byte, 8))
	requirePathError(t, err, "read", dir, syscall.EISDIR)
	require.NoError(t, handle.Close())
}

func TestMkdir(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	name := filepath.Join(dir, "sub")
	require.NoError(t, fsys.Mkdir(name, 0o700))
	info, err := fsys.Lstat(name)
	require.NoError(t, err)
	require.True(t, info.IsDir())
	require.Equal(t, fs.FileMode(0o700), info.Perm())

	requirePathError(t, fsys.Mkdir(name, 0o700), "mkdir", name, syscall.EEXIST)
	missing := filepath.Join(dir, "no", "sub")
	requirePathError(t, fsys.Mkdir(missing, 0o700), "mkdir", missing, syscall.ENOENT)
}

func TestMkdirTemp(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	first, err := fsys.MkdirTemp(dir, "lease-*.tmp")
	require.NoError(t, err)
	second, err := fsys.MkdirTemp(dir, "lease-*.tmp")
	require.NoError(t, err)
	require.NotEqual(t, first, second)
	for _, name := range []string{first, second} {
		require.Equal(t, dir, filepath.Dir(name))
		base := filepath.Base(name)
		require.Regexp(t, `^lease-[0-9a-f]{12}\.tmp$`, base)
		info, err := fsys.Lstat(name)
		require.NoError(t, err)
		require.True(t, info.IsDir())
		require.Equal(t, fs.FileMode(0o700), info.Perm())
	}
	noStar, err := fsys.MkdirTemp(dir, "plain")
	require.NoError(t, err)
	require.Regexp(t, `^plain[0-9a-f]{12}$`, filepath.Base(noStar))

	_, err = fsys.MkdirTemp(dir, "a/b*")
	requirePathError(t, err, "mkdirtemp", "a/b*", syscall.EINVAL)
	missing := filepath.Join(dir, "missing")
	_, err = fsys.MkdirTemp(missing, "x*")
	requirePathError(t, err, "mkdirtemp", filepath.Join(missing, "x*"), syscall.ENOENT)
}

func TestRename(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	source := filepath.Join(dir, "source")
	target := filepath.Join(dir, "target")
	writeFile(t, fsys, source, "new")
	writeFile(t, fsys, target, "old")
	before, err := fsys.Lstat(source)
	require.NoError(t, err)
	require.NoError(t, fsys.Rename(source, target))
	require.Equal(t, "new", readFile(t, fsys, target))
	after, err := fsys.Lstat(target)
	require.NoError(t, err)
	identityBefore, ok := before.Identity()
	require.True(t, ok)
	identityAfter, ok := after.Identity()
	require.True(t, ok)
	require.Equal(t, identityBefore, identityAfter, "rename keeps the inode identity")

	err = fsys.Rename(source, target)
	requireLinkError(t, err, "rename", source, target, syscall.ENOENT)
	require.ErrorIs(t, err, fs.ErrNotExist)

	full := filepath.Join(dir, "full")
	empty := filepath.Join(dir, "empty")
	require.NoError(t, fsys.Mkdir(full, 0o700))
	require.NoError(t, fsys.Mkdir(empty, 0o700))
	writeFile(t, fsys, filepath.Join(full, "entry"), "x")
	err = fsys.Rename(empty, full)
	requireLinkError(t, err, "rename", empty, full, syscall.ENOTEMPTY)
	require.ErrorIs(t, err, fs.ErrExist, "ENOTEMPTY is fs.ErrExist, as the engines test it")
	requireLinkError(t, fsys.Rename(empty, target), "rename", empty, target, syscall.ENOTDIR)
}

func TestRenameNoReplace(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	source := filepath.Join(dir, "source")
	target := filepath.Join(dir, "target")
	writeFile(t, fsys, source, "first")
	require.NoError(t, fsys.RenameNoReplace(source, target))
	require.Equal(t, "first", readFile(t, fsys, target))

	writeFile(t, fsys, source, "second")
	err := fsys.RenameNoReplace(source, target)
	requireLinkError(t, err, "renamenoreplace", source, target, syscall.EEXIST)
	require.ErrorIs(t, err, fs.ErrExist)
	require.Equal(t, "first", readFile(t, fsys, target), "target untouched")
	require.Equal(t, "second", readFile(t, fsys, source), "source untouched")

	missing := filepath.Join(dir, "missing")
	requireLinkError(t, fsys.RenameNoReplace(missing, filepath.Join(dir, "x")),
		"renamenoreplace", missing, filepath.Join(dir, "x"), syscall.ENOENT)
}

func TestLink(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	source := filepath.Join(dir, "source")
	target := filepath.Join(dir, "target")
	writeFile(t, fsys, source, "x")
	require.NoError(t, fsys.Link(source, target))
	sourceInfo, err := fsys.Lstat(source)
	require.NoError(t, err)
	targetInfo, err := fsys.Lstat(target)
	require.NoError(t, err)
	require.Equal(t, uint64(2), targetInfo.Nlink)
	require.Equal(t, sourceInfo.Ino, targetInfo.Ino)

	requireLinkError(t, fsys.Link(source, target), "link", source, target, syscall.EEXIST)
	missing := filepath.Join(dir, "missing")
	requireLinkError(t, fsys.Link(missing, filepath.Join(dir, "y")), "link", missing, filepath.Join(dir, "y"), syscall.ENOENT)
}

func TestSymlinkReadlink(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	require.NoError(t, fsys.Symlink("some/target", link))
	target, err := fsys.Readlink(link)
	require.NoError(t, err)
	require.Equal(t, "some/target", target)
	info, err := fsys.Lstat(link)
	require.NoError(t, err)
	require.True(t, info.IsSymlink())

	requireLinkError(t, fsys.Symlink("other", link), "symlink", "other", link, syscall.EEXIST)
	file := filepath.Join(dir, "file")
	writeFile(t, fsys, file, "x")
	_, err = fsys.Readlink(file)
	requirePathError(t, err, "readlink", file, syscall.EINVAL)
	missing := filepath.Join(dir, "missing")
	_, err = fsys.Readlink(missing)
	requirePathError(t, err, "readlink", missing, syscall.ENOENT)

	long := filepath.Join(dir, "long")
	longTarget := strings.Repeat("a", 1000)
	require.NoError(t, fsys.Symlink(longTarget, long))
	got, err := fsys.Readlink(long)
	require.NoError(t, err)
	require.Equal(t, longTarget, got, "targets longer than the first buffer")
}

func TestRemove(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, fsys, file, "x")
	require.NoError(t, fsys.Remove(file))
	_, err := fsys.Lstat(file)
	requirePathError(t, err, "lstat", file, syscall.ENOENT)
	requirePathError(t, fsys.Remove(file), "remove", file, syscall.ENOENT)

	empty := filepath.Join(dir, "empty")
	require.NoError(t, fsys.Mkdir(empty, 0o700))
	require.NoError(t, fsys.Remove(empty))

	full := filepath.Join(dir, "full")
	require.NoError(t, fsys.Mkdir(full, 0o700))
	writeFile(t, fsys, filepath.Join(full, "entry"), "x")
	err = fsys.Remove(full)
	requirePathError(t, err, "remove", full, syscall.ENOTEMPTY)
	require.ErrorIs(t, err, fs.ErrExist)

	// A symlink to a directory: Remove deletes the link, never the target.
	link := filepath.Join(dir, "link")
	require.NoError(t, fsys.Symlink(full, link))
	require.NoError(t, fsys.Remove(link))
	_, err = fsys.Lstat(link)
	require.ErrorIs(t, err, fs.ErrNotExist)
	info, err := fsys.Lstat(full)
	require.NoError(t, err)
	require.True(t, info.IsDir())
}

func TestReadDir(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	for _, name := range []string{"c", "a", "b"} {
		writeFile(t, fsys, filepath.Join(dir, name), name)
	}
	require.NoError(t, fsys.Mkdir(filepath.Join(dir, "d"), 0o700))
	require.NoError(t, fsys.Symlink("a", filepath.Join(dir, "0link")))
	entries, err := fsys.ReadDir(dir)
	require.NoError(t, err)
	require.Equal(t, []lease.DirEntry{
		{Name: "0link", Type: fs.ModeSymlink},
		{Name: "a", Type: 0},
		{Name: "b", Type: 0},
		{Name: "c", Type: 0},
		{Name: "d", Type: fs.ModeDir},
	}, entries)

	empty, err := fsys.ReadDir(filepath.Join(dir, "d"))
	require.NoError(t, err)
	require.Empty(t, empty)
	file := filepath.Join(dir, "a")
	_, err = fsys.ReadDir(file)
	requirePathError(t, err, "open", file, syscall.ENOTDIR)
	missing := filepath.Join(dir, "missing")
	_, err = fsys.ReadDir(missing)
	requirePathError(t, err, "open", missing, syscall.ENOENT)
}

func TestStatFollowsLstatDoesNot(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, fsys, file, "12345")
	link := filepath.Join(dir, "link")
	require.NoError(t, fsys.Symlink(file, link))

	viaLink, err := fsys.Stat(link)
	require.NoError(t, err)
	direct, err := fsys.Stat(file)
	require.NoError(t, err)
	require.Equal(t, "link", viaLink.Name)
	viaLink.Name = direct.Name
	require.Equal(t, direct, viaLink)
	require.Equal(t, int64(5), direct.Size)

	linkInfo, err := fsys.Lstat(link)
	require.NoError(t, err)
	require.True(t, linkInfo.IsSymlink())
	require.NotEqual(t, direct.Ino, linkInfo.Ino)

	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, fsys.Symlink(filepath.Join(dir, "nowhere"), dangling))
	_, err = fsys.Stat(dangling)
	requirePathError(t, err, "stat", dangling, syscall.ENOENT)
	_, err = fsys.Lstat(dangling)
	require.NoError(t, err)
	underFile := filepath.Join(file, "x")
	_, err = fsys.Lstat(underFile)
	requirePathError(t, err, "lstat", underFile, syscall.ENOTDIR)
}

func TestChmod(t *testing.T) {
	fsys := NewFS()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	writeFile(t, fsys, file, "x")
	require.NoError(t, fsys.Chmod(file, 0o644))
	info, err := fsys.Lstat(file)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o644), info.Mode)
	require.NoError(t, fsys.Chmod(file, 0o600|fs.ModeSticky))
	info, err = fsys.Lstat(file)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600)|fs.ModeSticky, info.Mode)

	missing := filepath.Join(dir, "missing")
	err = fsys.Chmod(missing, 0o600)
	requirePathError(t, err, "chmod", missing, syscall.ENOENT)
	require.True(t, errors.Is(err, fs.ErrNotExist))
}

// TestOpenReadOnlyFIFODoesNotBlock: a FIFO planted where a state file was
// expected must not hang the engine that opens it for reading.
func TestOpenReadOnlyFIFODoesNotBlock(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "owner.json")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	file, err := NewFS().OpenFile(fifo, lease.O_RDONLY|lease.O_NOFOLLOW, 0)
	require.NoError(t, err)
	info, err := file.Stat()
	require.NoError(t, err)
	require.Equal(t, fs.ModeNamedPipe, info.Mode.Type())
	require.NoError(t, file.Close())
}
