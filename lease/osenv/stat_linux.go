package osenv

import (
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/lease"
)

// statxMask is what every stat asks for: the basic fields plus birth time.
const statxMask = unix.STATX_BASIC_STATS | unix.STATX_BTIME

// statxMaskRequired are the fields an identity cannot do without. A kernel
// that omits one gets ENOTSUP rather than a zero that looks like data.
const statxMaskRequired = unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_INO

// statPath is statx(AT_FDCWD, name), following a final symlink if follow.
func statPath(name string, follow bool) (lease.FileInfo, error) {
	flags := unix.AT_STATX_SYNC_AS_STAT
	if !follow {
		flags |= unix.AT_SYMLINK_NOFOLLOW
	}
	return statx(unix.AT_FDCWD, name, flags, filepath.Base(name))
}

// statFD is statx(fd, "", AT_EMPTY_PATH): fstat with birth time.
func statFD(fd int, base string) (lease.FileInfo, error) {
	return statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT, base)
}

func statx(dirfd int, path string, flags int, base string) (lease.FileInfo, error) {
	var stx unix.Statx_t
	err := retryEINTR(func() error { return unix.Statx(dirfd, path, flags, statxMask, &stx) })
	if err != nil {
		return lease.FileInfo{}, err
	}
	if stx.Mask&statxMaskRequired != statxMaskRequired {
		return lease.FileInfo{}, syscall.ENOTSUP
	}
	info := lease.FileInfo{
		Name:  base,
		Mode:  fileMode(uint32(stx.Mode)),
		Dev:   unix.Mkdev(stx.Dev_major, stx.Dev_minor),
		Ino:   stx.Ino,
		UID:   stx.Uid,
		Nlink: uint64(stx.Nlink),
		Size:  int64(stx.Size),
	}
	if stx.Mask&unix.STATX_MTIME != 0 {
		info.MtimeNs = stx.Mtime.Sec*1e9 + int64(stx.Mtime.Nsec)
	}
	// Without STATX_BTIME in the returned mask the btime field is garbage
	// or zero: leave the identity unknown.
	if stx.Mask&unix.STATX_BTIME != 0 {
		info.BirthNs = stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
		info.HasBirth = true
	}
	return info, nil
}

// statAt is statx(dirfd, name, AT_SYMLINK_NOFOLLOW): fstatat with birth time.
func statAt(dirfd int, name string) (lease.FileInfo, error) {
	return statx(dirfd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT, name)
}
