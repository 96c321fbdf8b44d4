package node

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestLddPaths(t *testing.T) {
	out := `	linux-vdso.so.1 (0x00007ffb9837e000)
	libxtables.so.12 => /lib/x86_64-linux-gnu/libxtables.so.12 (0x00007ffb982b7000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007ffb9809a000)
	/lib64/ld-linux-x86-64.so.2 (0x00007ffb98380000)
`
	got, err := lddPaths(out)
	want := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libxtables.so.12", "/lib64/ld-linux-x86-64.so.2"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("lddPaths = %q, %v; want %q", got, err, want)
	}
	if _, err := lddPaths("\tlibfoo.so.1 => not found\n"); err == nil {
		t.Error("a missing library was not an error")
	}
}

// TestImagesRunTheirBinaries: each image's files, unpacked as a root
// filesystem, run its binary: every library it loads is in the layer.
func TestImagesRunTheirBinaries(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (chroot)")
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		make func() (image, error)
		args []string
	}{
		{"loadgen", func() (image, error) { return loadgenImage(dir, exe) }, []string{"/usr/sbin/iptables-restore", "--version"}},
	}
	for proxy, bin := range proxyBinaries {
		arg := "-v"
		if proxy == "caddy" {
			arg = "version"
		}
		cases = append(cases, struct {
			name string
			make func() (image, error)
			args []string
		}{proxy, func() (image, error) { return proxyImage(dir, proxy) }, []string{bin, arg}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.args[0]); err != nil && tc.name != "loadgen" {
				t.Skipf("%s is not installed", tc.args[0])
			}
			im, err := tc.make()
			if err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, tc.name+"-root")
			unpack(t, im.archive, root)
			cmd := exec.Command(tc.args[0], tc.args[1:]...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
			cmd.Env = append(imageEnv, "HOME=/tmp") // caddy wants one; the pods set it
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%q in the image: %v: %s", tc.args, err, out)
			}
		})
	}
}

// unpack writes the one layer of an image archive under root.
func unpack(t *testing.T, archive, root string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			t.Fatal("no layer in the archive")
		}
		if err != nil {
			t.Fatal(err)
		}
		// The layer is the one gzipped blob.
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			continue
		}
		lr := tar.NewReader(zr)
		for {
			lh, err := lr.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", h.Name, err)
			}
			p := filepath.Join(root, lh.Name)
			switch lh.Typeflag {
			case tar.TypeDir:
				err = os.MkdirAll(p, 0o755)
			case tar.TypeSymlink:
				err = os.Symlink(lh.Linkname, p)
			default:
				var data []byte
				if data, err = io.ReadAll(lr); err == nil {
					err = os.WriteFile(p, data, os.FileMode(lh.Mode))
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
