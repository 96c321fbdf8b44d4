package store

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// inProc tells whether dir is in /proc (procfs), whose files and links
// are written through, never replaced.
func inProc(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.PROC_SUPER_MAGIC
}

// writable tells whether this process may write path, without opening it
// (a FIFO's open would wait for a reader).
func writable(path string) error {
	if err := unix.Access(path, unix.W_OK); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// keepOwner gives the temporary file that replaces a file the file's
// owner and group, which only root can; others keep their own.
func keepOwner(tmp string, was fs.FileInfo) {
	st, ok := was.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return
	}
	if int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid() {
		os.Lchown(tmp, int(st.Uid), int(st.Gid))
	}
}
