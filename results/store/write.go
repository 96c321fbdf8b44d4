package store

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// Stdout is the output path that means standard output, as "-" means
// standard input to --targets: the caller writes it, CheckWritable takes
// it.
const Stdout = "-"

// maxLinks bounds the symbolic links followed to a file, as the kernel's
// own bound (ELOOP past 40).
const maxLinks = 40

// dest is where a write to a path lands.
type dest struct {
	path   string      // the file written: the path, its links resolved
	info   fs.FileInfo // what is there now; nil for nothing
	direct bool        // written in place (a device, FIFO, socket, a file of /proc), not replaced
}

// resolve follows path's symbolic links, one by one, to the file a write
// lands on: a regular file or a new path (replaced or made atomically), or
// something written in place. A dangling link resolves to its target, made
// new. A link in /proc (/dev/stdout's /proc/self/fd/1, /dev/fd/N) names
// what a process holds open — a pipe, a terminal, a deleted file — not a
// path: it is written through, as a shell's > does.
func resolve(path string) (dest, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return dest{path: p}, nil
		}
		if err != nil {
			return dest{}, err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0 && inProc(filepath.Dir(p)):
			if fi, err = os.Stat(p); err != nil {
				return dest{}, err
			}
			if fi.IsDir() {
				return dest{}, syscall.EISDIR
			}
			return dest{path: p, info: fi, direct: true}, nil
		case fi.Mode()&fs.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				return dest{}, err
			}
			if !filepath.IsAbs(to) {
				// Relative to the link's directory, as the kernel reads it
				// (no lexical cleaning of .. past a linked directory).
				to = filepath.Dir(p) + string(os.PathSeparator) + to
			}
			p = to
		case fi.IsDir():
			return dest{}, syscall.EISDIR
		case fi.Mode().IsRegular():
			return dest{path: p, info: fi, direct: inProc(filepath.Dir(p))}, nil
		default:
			return dest{path: p, info: fi, direct: true}, nil
		}
	}
	return dest{}, syscall.ELOOP
}

// CheckWritable tells, before any work, whether WriteFile could write
// path: standard output ("-" and its aliases: IsStdout); a device, FIFO or socket the process may
// write to; or a file (new, or reached through links) whose directory
// exists and takes a new file, tried with a temporary file there. The
// error names path.
func CheckWritable(path string) error {
	if IsStdout(path) {
		return nil
	}
	d, err := resolve(path)
	if errors.Is(err, syscall.EISDIR) {
		return fmt.Errorf("cannot write %s: it is a directory", path)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, reason(err))
	}
	if d.direct {
		if err := writable(d.path); err != nil {
			return fmt.Errorf("cannot write %s: %v", path, reason(err))
		}
		if d.info.Mode()&fs.ModeNamedPipe != 0 {
			if err := holdFIFO(d.path); err != nil {
				return fmt.Errorf("cannot write %s: %v", path, reason(err))
			}
		}
		return nil
	}
	dir := filepath.Dir(d.path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(d.path)+".*.tmp")
	if err != nil {
		return namePath(path, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// WriteFile writes data to path without destroying what is there:
//   - a regular file or a new path: atomically, a temporary file in its
//     directory, synced, then renamed over it (a reader sees the old
//     file or the new one, never a part); an existing file keeps its
//     mode and, written as root, its owner;
//   - a symbolic link: resolved link by link, its final target written
//     as above (a dangling link's target is made), the links left as
//     they are;
//   - a device, FIFO or socket: written directly, in place; a FIFO
//     needs its reader started (no reader is an error, not a wait
//     forever), a socket takes the bytes as a client.
//
// Errors name path, not the temporary file beside it.
func WriteFile(path string, data []byte) error {
	d, err := resolve(path)
	if err == nil {
		if d.direct {
			err = writeDirect(d, data)
		} else {
			err = replace(d, data)
		}
	}
	if err != nil {
		return namePath(path, err)
	}
	return nil
}

// replace writes d's file atomically: a temporary file in its directory,
// renamed over it.
func replace(d dest, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(d.path), "."+filepath.Base(d.path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if d.info != nil {
		mode = d.info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		keepOwner(tmp.Name(), d.info)
	}
	if err = os.Chmod(tmp.Name(), mode); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), d.path)
}

// writeDirect writes data in place: into a device, a FIFO (which must
// have a reader: opened without blocking, so a FIFO nobody reads is an
// error, not a wait forever), a socket (as a client), or a file of /proc.
func writeDirect(d dest, data []byte) error {
	mode := d.info.Mode()
	if mode&fs.ModeSocket != 0 {
		return writeSocket(d.path, data)
	}
	var f *os.File
	var err error
	switch {
	case mode&fs.ModeNamedPipe != 0:
		f, err = takeFIFO(d.path)
	case mode.IsRegular():
		f, err = os.OpenFile(d.path, os.O_WRONLY|os.O_TRUNC, 0)
	default:
		f, err = os.OpenFile(d.path, os.O_WRONLY, 0)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeSocket sends data to the Unix socket at path, as a stream, or as
// one datagram to a datagram socket.
func writeSocket(path string, data []byte) error {
	c, err := dialSocket(path)
	if err != nil {
		return err
	}
	_, err = c.Write(data)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

// dialSocket connects to the Unix socket at path: a stream, or a
// datagram socket.
func dialSocket(path string) (net.Conn, error) {
	c, err := net.Dial("unix", path)
	if errors.Is(err, syscall.EPROTOTYPE) {
		c, err = net.Dial("unixgram", path)
	}
	return c, err
}

// namePath makes an error about the temporary file, or a file a link
// leads to, the file the user asked for.
func namePath(path string, err error) error {
	return &fs.PathError{Op: "write", Path: path, Err: reason(err)}
}

// reason is err without the operation and path it repeats.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return reason(oe.Err)
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}
