package osenv

import (
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/leasekit/leasekit/lease"
)

// statPath is stat(2) or lstat(2); darwin reports birth time in
// st_birthtimespec (unix.Stat_t.Btim).
func statPath(name string, follow bool) (lease.FileInfo, error) {
	var st unix.Stat_t
	err := retryEINTR(func() error {
		if follow {
			return unix.Stat(name, &st)
		}
		return unix.Lstat(name, &st)
	})
	if err != nil {
		return lease.FileInfo{}, err
	}
	return fromStat(&st, filepath.Base(name)), nil
}

// statFD is fstat(2).
func statFD(fd int, base string) (lease.FileInfo, error) {
	var st unix.Stat_t
	err := retryEINTR(func() error { return unix.Fstat(fd, &st) })
	if err != nil {
		return lease.FileInfo{}, err
	}
	return fromStat(&st, base), nil
}

func fromStat(st *unix.Stat_t, base string) lease.FileInfo {
	info := lease.FileInfo{
		Name:    base,
		Mode:    fileMode(uint32(st.Mode)),
		Dev:     uint64(uint32(st.Dev)),
		Ino:     st.Ino,
		UID:     st.Uid,
		Nlink:   uint64(st.Nlink),
		Size:    st.Size,
		MtimeNs: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
	}
	// A filesystem without birth times reports zero: leave the identity
	// unknown rather than "born at the epoch".
	birthNs := st.Btim.Sec*1e9 + st.Btim.Nsec
	if birthNs > 0 {
		info.BirthNs = birthNs
		info.HasBirth = true
	}
	return info
}

// statAt is fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW).
func statAt(dirfd int, name string) (lease.FileInfo, error) {
	var st unix.Stat_t
	err := retryEINTR(func() error { return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	if err != nil {
		return lease.FileInfo{}, err
	}
	return fromStat(&st, name), nil
}
