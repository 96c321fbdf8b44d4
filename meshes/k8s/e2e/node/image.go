package node

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	digest "github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// image is an OCI image archive made here, and its reference.
type image struct {
	ref     string
	archive string
}

// images are the node's two images.
type nodeImages struct {
	loadgen, pause image
}

// The images' repositories; their tags are their layers' digests, so
// that a rebuilt loadgen is a new image and pods never run an old one.
const (
	LoadgenRepo = "loadgen.local/loadgen"
	PauseRepo   = "loadgen.local/pause"
)

// loadgenUser is the loadgen image's user, as the Dockerfile's.
const loadgenUser = "65532:65532"

// images writes both images' OCI archives under dir.
func (b *Bins) images(dir string) (nodeImages, error) {
	var out nodeImages
	var err error
	// The target pods and workers run as 65532 with a read-only root,
	// as the Dockerfile's image does; it has iptables-restore, for
	// loadgen mesh capture.
	if out.loadgen, err = loadgenImage(dir, b.Loadgen); err != nil {
		return out, err
	}
	if out.pause, err = writeImage(dir, PauseRepo, b.Pause, "/pause", "65535:65535"); err != nil {
		return out, err
	}
	return out, nil
}

// writeImage writes an OCI image layout, as a tar archive, of one static
// binary FROM scratch: one layer holding it at path, the binary as the
// entrypoint. `ctr images import` takes its name from the index's
// annotations.
func writeImage(dir, repo, bin, path, user string) (image, error) {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return image{}, err
	}
	return writeImageFiles(dir, repo, []imageFile{{path: path, data: exe, mode: 0o755}},
		ocispec.ImageConfig{Entrypoint: []string{path}, User: user, WorkingDir: "/"})
}

// imageFile is one file of an image's layer: its content, or a symbolic
// link to link.
type imageFile struct {
	path string // absolute
	data []byte
	mode int64
	link string
}

// writeImageFiles writes an OCI image layout, as a tar archive, of files
// FROM scratch in one layer, with cfg as its config. Its tag is the
// layer's digest, so that new content is a new image.
func writeImageFiles(dir, repo string, files []imageFile, cfg ocispec.ImageConfig) (image, error) {
	// The layer: a gzipped tar of the files, their directories first; its
	// diff ID is the digest of the uncompressed tar.
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := filepath.Dir(f.path); d != "/" && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	var dirList []string
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Name: d[1:] + "/", Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
			return image{}, err
		}
	}
	for _, f := range files {
		h := &tar.Header{Name: f.path[1:], Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch, Typeflag: tar.TypeReg}
		if f.link != "" {
			h = &tar.Header{Name: f.path[1:], Mode: 0o777, ModTime: epoch, Typeflag: tar.TypeSymlink, Linkname: f.link}
		}
		if err := tw.WriteHeader(h); err != nil {
			return image{}, err
		}
		if f.link == "" {
			if _, err := tw.Write(f.data); err != nil {
				return image{}, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return image{}, err
	}
	sum := sha256.Sum256(raw.Bytes())
	ref := fmt.Sprintf("%s:%x", repo, sum[:6])
	diffID := digest.FromBytes(raw.Bytes())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return image{}, err
	}
	if err := zw.Close(); err != nil {
		return image{}, err
	}
	layer := gz.Bytes()

	config, err := json.Marshal(ocispec.Image{
		Created:  &epoch,
		Platform: ocispec.Platform{Architecture: runtime.GOARCH, OS: "linux"},
		Config:   cfg,
		RootFS:   ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{diffID}},
	})
	if err != nil {
		return image{}, err
	}
	manifest, err := json.Marshal(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    ocispec.Descriptor{MediaType: ocispec.MediaTypeImageConfig, Digest: digest.FromBytes(config), Size: int64(len(config))},
		Layers:    []ocispec.Descriptor{{MediaType: ocispec.MediaTypeImageLayerGzip, Digest: digest.FromBytes(layer), Size: int64(len(layer))}},
	})
	if err != nil {
		return image{}, err
	}
	index, err := json.Marshal(ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{{
			MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(manifest), Size: int64(len(manifest)),
			Platform:    &ocispec.Platform{Architecture: runtime.GOARCH, OS: "linux"},
			Annotations: map[string]string{"io.containerd.image.name": ref, ocispec.AnnotationRefName: ref[len(repo)+1:]},
		}},
	})
	if err != nil {
		return image{}, err
	}
	layout, _ := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})

	archive := filepath.Join(dir, "images", filepath.Base(repo)+".oci.tar")
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		return image{}, err
	}
	var out bytes.Buffer
	aw := tar.NewWriter(&out)
	blobs := []struct {
		name string
		data []byte
	}{
		{ocispec.ImageLayoutFile, layout},
		{"index.json", index},
		{blob(config), config},
		{blob(manifest), manifest},
		{blob(layer), layer},
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := aw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, Typeflag: tar.TypeDir, ModTime: epoch}); err != nil {
			return image{}, err
		}
	}
	for _, f := range blobs {
		if err := aw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return image{}, err
		}
		if _, err := aw.Write(f.data); err != nil {
			return image{}, err
		}
	}
	if err := aw.Close(); err != nil {
		return image{}, err
	}
	if err := os.WriteFile(archive, out.Bytes(), 0o644); err != nil {
		return image{}, err
	}
	return image{ref: ref, archive: archive}, nil
}

func blob(b []byte) string { return "blobs/sha256/" + digest.FromBytes(b).Encoded() }
