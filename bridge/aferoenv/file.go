package aferoenv

import (
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/spf13/afero"

	"github.com/leasekit/leasekit/env"
	"github.com/leasekit/leasekit/envos"
)

// File is afero.File over an env.File.
type File struct {
	file env.File
	// listed is what Readdir and Readdirnames have returned so far of a
	// directory's entries (os.File keeps that position too).
	listed int
}

var _ afero.File = (*File)(nil)

func (f *File) Name() string                { return f.file.Name() }
func (f *File) Read(p []byte) (int, error)  { return f.file.Read(p) }
func (f *File) Write(p []byte) (int, error) { return f.file.Write(p) }
func (f *File) Sync() error                 { return f.file.Sync() }
func (f *File) Close() error                { return f.file.Close() }

// WriteString is os.File.WriteString.
func (f *File) WriteString(s string) (int, error) { return f.file.Write([]byte(s)) }

// Stat is os.File.Stat.
func (f *File) Stat() (os.FileInfo, error) {
	info, err := f.file.Stat()
	if err != nil {
		return nil, err
	}
	return FileInfo{info}, nil
}

// Seek is os.File.Seek.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	return envos.Seek(f.file, offset, whence)
}

// ReadAt is os.File.ReadAt.
func (f *File) ReadAt(p []byte, off int64) (int, error) { return envos.ReadAt(f.file, p, off) }

// WriteAt is ENOSYS: env has no pwrite.
func (f *File) WriteAt([]byte, int64) (int, error) {
	return 0, &fs.PathError{Op: "pwrite", Path: f.file.Name(), Err: syscall.ENOSYS}
}

// Truncate is os.File.Truncate.
func (f *File) Truncate(size int64) error { return envos.FileTruncate(f.file, size) }

// Readdir is os.File.Readdir: count <= 0 lists every entry left (nil
// error at the end); count > 0 lists at most count, and io.EOF once none
// is left. Each entry is Lstat'ed through the open directory (StatAt).
func (f *File) Readdir(count int) ([]os.FileInfo, error) {
	names, err := f.Readdirnames(count)
	infos := make([]os.FileInfo, 0, len(names))
	for _, name := range names {
		info, statErr := f.file.StatAt(name)
		if statErr != nil {
			return infos, statErr
		}
		infos = append(infos, FileInfo{info})
	}
	return infos, err
}

// Readdirnames is os.File.Readdirnames, with Readdir's count rule.
func (f *File) Readdirnames(n int) ([]string, error) {
	entries, err := f.file.ReadDir()
	if err != nil {
		return nil, err
	}
	left := entries[min(f.listed, len(entries)):]
	if n > 0 && len(left) == 0 {
		return nil, io.EOF
	}
	if n > 0 && len(left) > n {
		left = left[:n]
	}
	f.listed += len(left)
	names := make([]string, len(left))
	for i, entry := range left {
		names[i] = entry.Name
	}
	return names, nil
}
