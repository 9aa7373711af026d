package statefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/leasekit/leasekit/internal/fspath"
)

// FileMode and DirMode are the modes of everything the engines create: the
// state is private to the user who runs them.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// TempPrefix starts the name of every temp file this package makes, so
// leftover cleanup can tell them from state files.
const TempPrefix = ".tmp-"

// NotRegularError refuses a state file that is not a regular file: a
// symlink, a directory, a FIFO, a device. Opening such a thing could follow
// an attacker's link or block forever.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (mode %v)", e.Path, e.Mode)
}

// TooLargeError refuses a state file over the size its schema allows.
type TooLargeError struct {
	Path     string
	Size     int64
	MaxBytes int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte bound", e.Path, e.Size, e.MaxBytes)
}

// ChangedError says the file at Path was swapped for another inode while it
// was being read.
type ChangedError struct{ Path string }

func (e *ChangedError) Error() string { return e.Path + " changed while it was being read" }

// ForeignOwnerError refuses a state file owned by another uid: only that
// uid (or root) could have written it, so its content is not the engine's.
type ForeignOwnerError struct {
	Path string
	// UID is the file's owner; Want the caller's uid.
	UID  uint32
	Want uint32
}

func (e *ForeignOwnerError) Error() string {
	return fmt.Sprintf("%s is owned by uid %d, not by this process's uid %d; an operator must check who wrote it",
		e.Path, e.UID, e.Want)
}

// ReadOwnedFile is ReadFile for a file that must belong to uid: a file of
// another uid is refused with *ForeignOwnerError, checked on the opened
// inode as well as on the name.
func ReadOwnedFile(fsys FS, name string, maxBytes int64, uid uint32) ([]byte, error) {
	return readFile(fsys, name, maxBytes, &uid, nil)
}

// ReadOwnedFileInto is ReadOwnedFile reading into buf's array when it has
// room (see ReadOpenedInto): the content returned may share it.
func ReadOwnedFileInto(fsys FS, name string, maxBytes int64, uid uint32, buf []byte) ([]byte, error) {
	return readFile(fsys, name, maxBytes, &uid, buf)
}

// ReadFile reads the regular file at name, at most maxBytes of it. It never
// follows a symlink and never opens a FIFO or device: Lstat decides first,
// and the opened file must be the inode Lstat saw. A missing file returns
// the FS's *fs.PathError, for which errors.Is(err, fs.ErrNotExist) holds.
func ReadFile(fsys FS, name string, maxBytes int64) ([]byte, error) {
	return readFile(fsys, name, maxBytes, nil, nil)
}

// readFile is ReadFile and, when uid is not nil, ReadOwnedFile; it reads
// into buf as ReadOpenedInto does.
func readFile(fsys FS, name string, maxBytes int64, uid *uint32, buf []byte) ([]byte, error) {
	if maxBytes <= 0 {
		panic("statefile: ReadFile needs a positive bound")
	}
	before, err := fsys.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !before.IsRegular() {
		return nil, &NotRegularError{Path: name, Mode: before.Mode}
	}
	if before.Size > maxBytes {
		return nil, &TooLargeError{Path: name, Size: before.Size, MaxBytes: maxBytes}
	}
	if uid != nil && before.UID != *uid {
		return nil, &ForeignOwnerError{Path: name, UID: before.UID, Want: *uid}
	}
	file, err := fsys.OpenFile(name, O_RDONLY|O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	opened, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !SameInode(opened, before) || !opened.IsRegular() {
		return nil, &ChangedError{Path: name}
	}
	if uid != nil && opened.UID != *uid {
		return nil, &ForeignOwnerError{Path: name, UID: opened.UID, Want: *uid}
	}
	return ReadOpenedInto(file, name, maxBytes, opened.Size, buf)
}

// ReadOpened reads an opened file to its end, at most maxBytes of it
// (*TooLargeError past that), into one buffer when the file still has the
// sizeHint bytes its fstat showed.
func ReadOpened(file File, name string, maxBytes, sizeHint int64) ([]byte, error) {
	return ReadOpenedInto(file, name, maxBytes, sizeHint, nil)
}

// ReadOpenedInto is ReadOpened that reads into buf's array when it has
// room for the buffer ReadOpened would make, so that a caller reading
// records in turn, and keeping none past the next, allocates and clears
// one buffer instead of one per record. The content returned then shares
// buf's array. Each Read is handed a slice of the length ReadOpened's own
// buffer would give it (the simulator's runs see the reads' lengths).
func ReadOpenedInto(file File, name string, maxBytes, sizeHint int64, buf []byte) ([]byte, error) {
	// One buffer of the size the file had when it was opened, plus the byte
	// that shows it grew: a record is read in one allocation.
	size := min(max(sizeHint, 0), maxBytes) + 1
	content := buf[:0:min(int64(cap(buf)), size)]
	if int64(cap(content)) < size {
		content = make([]byte, 0, size)
	}
	limited := io.LimitedReader{R: file, N: maxBytes + 1}
	for emptyReads := 0; ; {
		if len(content) == cap(content) {
			content = append(content, 0)[:len(content)]
		}
		n, err := limited.Read(content[len(content):cap(content)])
		content = content[:len(content)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if emptyReads = emptyReadsAfter(emptyReads, n); emptyReads > emptyReadsMax {
			return nil, &fs.PathError{Op: "read", Path: name, Err: io.ErrNoProgress}
		}
	}
	if int64(len(content)) > maxBytes {
		return nil, &TooLargeError{Path: name, Size: int64(len(content)), MaxBytes: maxBytes}
	}
	return content, nil
}

// emptyReadsMax bounds the reads in a row that return nothing and no error
// (a broken reader); io.ReadAll would spin on them forever.
const emptyReadsMax = 100

func emptyReadsAfter(emptyReads, n int) int {
	if n > 0 {
		return 0
	}
	return emptyReads + 1
}

// SyncDir makes the entries of directory dir durable: open it read-only and
// fsync it. EINTR retries are the FS's duty (osenv retries them).
func SyncDir(fsys FS, dir string) error {
	handle, err := fsys.OpenFile(dir, O_RDONLY|O_DIRECTORY|O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	syncErr := handle.Sync()
	closeErr := handle.Close()
	return JoinErrors(syncErr, closeErr)
}

// WriteTemp writes data to a new temp file in dir and fsyncs it, so that any
// name later given to it points at durable bytes. The name is
// dir/.tmp-<tag>-<id>: tag lets a later cleanup tell whose write it was.
func WriteTemp(fsys FS, ids IDSource, dir, tag string, data []byte) (string, error) {
	name := fspath.JoinName(dir, TempPrefix, tag, "-", ids.NewID())
	file, err := fsys.OpenFile(name, O_WRONLY|O_CREATE|O_EXCL|O_NOFOLLOW, FileMode)
	if err != nil {
		return "", err
	}
	err = writeAndSync(file, data)
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return "", JoinErrors(err, removeQuietly(fsys, name))
	}
	return name, nil
}

func writeAndSync(file File, data []byte) error {
	written, err := file.Write(data)
	if err != nil {
		return err
	}
	if written != len(data) {
		return fmt.Errorf("%s: short write: %d of %d bytes: %w", file.Name(), written, len(data), io.ErrShortWrite)
	}
	// If fsync fails the data is not durable, and the kernel may already have
	// marked the pages clean: a retry would "succeed" without writing. The
	// whole write fails instead.
	return file.Sync()
}

// removeQuietly removes a temp file this call made; a missing file is fine.
func removeQuietly(fsys FS, name string) error {
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ReplaceAtomic replaces (or creates) the file name with data: temp, fsync,
// rename over name, fsync the directory. A crash at any point leaves either
// the old complete file or the new complete one under name.
func ReplaceAtomic(fsys FS, ids IDSource, name, tag string, data []byte) error {
	return ReplaceAtomicAll(fsys, ids, tag, Replacement{Name: name, Data: data})
}

// Replacement is one file ReplaceAtomicAll replaces: Name gets Data.
type Replacement struct {
	Name string
	Data []byte
}

// ReplaceAtomicAll replaces several files of one directory with a single
// directory fsync: every temp written and fsynced first, then the renames
// in the order given, then the fsync. Each name always shows an old or a
// new complete file. A process crash leaves the renames done in order up
// to some point; a power loss before the fsync may keep any subset of
// them, so a caller must not need one rename durable before another.
func ReplaceAtomicAll(fsys FS, ids IDSource, tag string, files ...Replacement) error {
	dir := fspath.Dir(files[0].Name)
	for _, file := range files {
		if fspath.Dir(file.Name) != dir {
			panic("statefile: ReplaceAtomicAll across directories: " + file.Name + " is not in " + dir)
		}
	}
	temps := make([]string, 0, len(files))
	for _, file := range files {
		temp, err := WriteTemp(fsys, ids, dir, tag, file.Data)
		if err != nil {
			return JoinErrors(err, removeTemps(fsys, temps))
		}
		temps = append(temps, temp)
	}
	for i, file := range files {
		if err := fsys.Rename(temps[i], file.Name); err != nil {
			return JoinErrors(err, removeTemps(fsys, temps[i:]))
		}
	}
	return SyncDir(fsys, dir)
}

// removeTemps removes temps this call made and did not rename.
func removeTemps(fsys FS, temps []string) error {
	var errs error
	for _, temp := range temps {
		errs = JoinErrors(errs, removeQuietly(fsys, temp))
	}
	return errs
}

// CreateOnly publishes data under name only if name does not exist yet:
// temp, fsync, rename-no-replace, fsync the directory. name never shows an
// empty or torn file. If name exists, the temp is removed and the returned
// error satisfies errors.Is(err, fs.ErrExist).
func CreateOnly(fsys FS, ids IDSource, name, tag string, data []byte) error {
	_, err := CreateOnlyPublished(fsys, ids, name, tag, data)
	return err
}

// CreateOnlyPublished is CreateOnly that also says whether name was
// published. A caller that must give back what it created after an error
// needs to know: a failure before the publish (the temp's write or fsync,
// the rename) left nothing at name, so whatever is there is another
// process's; a failure after it (the directory fsync) left this call's file
// at name, unless another process has moved it since.
func CreateOnlyPublished(fsys FS, ids IDSource, name, tag string, data []byte) (published bool, err error) {
	dir := fspath.Dir(name)
	temp, err := WriteTemp(fsys, ids, dir, tag, data)
	if err != nil {
		return false, err
	}
	if err := publishNoReplace(fsys, temp, name); err != nil {
		return false, JoinErrors(err, removeQuietly(fsys, temp))
	}
	return true, SyncDir(fsys, dir)
}

// CreateOnlyIdentity is CreateOnly that also returns the published file's
// identity (its Lstat), taken from the temp before it is published: a
// rename or a link keeps the inode. A caller that must later recognise its
// own file (statecas's mutation claim) cannot Lstat name after publishing:
// by then an orphan recovery may have moved the file aside and another
// process published its own under name, whose inode it would take for its
// own.
func CreateOnlyIdentity(fsys FS, ids IDSource, name, tag string, data []byte) (FileInfo, error) {
	dir := fspath.Dir(name)
	temp, err := WriteTemp(fsys, ids, dir, tag, data)
	if err != nil {
		return FileInfo{}, err
	}
	identity, err := fsys.Lstat(temp)
	if err == nil {
		err = publishNoReplace(fsys, temp, name)
	}
	if err != nil {
		return FileInfo{}, JoinErrors(err, removeQuietly(fsys, temp))
	}
	return identity, SyncDir(fsys, dir)
}

// publishNoReplace moves temp to name unless name exists. Where the kernel
// lacks renameat2 it falls back to link+unlink, which is just as atomic for
// the final name (link fails with EEXIST) but leaves the temp behind if a
// crash comes between the two calls; leftover cleanup removes it later.
func publishNoReplace(fsys FS, temp, name string) error {
	err := fsys.RenameNoReplace(temp, name)
	if !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	if err := fsys.Link(temp, name); err != nil {
		return err
	}
	return fsys.Remove(temp)
}

// JoinErrors is errors.Join that returns a lone error unchanged: the usual
// case (a failed step whose clean-up succeeded) then keeps the step's own
// error, with nothing allocated, and callers can compare it directly.
func JoinErrors(first, second error) error {
	switch {
	case first == nil:
		return second
	case second == nil:
		return first
	}
	return errors.Join(first, second)
}

// IsError reports whether err's tree holds an E, as errors.As would, and
// allocates nothing: errors.As's target escapes, one allocation per type
// asked, and the engines ask on every failed read.
func IsError[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// SameInode reports whether a and b describe the same inode: device, inode
// number and birth time. Device and inode alone are not an identity: a
// filesystem reuses a freed inode number at once, so a directory released
// and another created in its place between two Lstats share dev+ino (lease
// campaign seeds 9257052 and 9305074 reach it: compared by dev+ino alone,
// Inspect reports a receiver.lock corrupt that never was). Where the filesystem reports no
// birth time on either side, dev+ino is all there is to compare.
func SameInode(a, b FileInfo) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino && a.HasBirth == b.HasBirth && a.BirthNs == b.BirthNs
}
