package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Types says where a Call's types come from: a FileDescriptorSet
// (Protoset), .proto files parsed here (Proto, their imports found in
// ImportPaths, as protoc -I), or, both empty, the server's reflection.
type Types struct {
	Protoset    string
	Proto       []string
	ImportPaths []string
}

// Validate reports the first thing wrong with t, in one line.
func (t Types) Validate() error {
	switch {
	case t.Protoset != "" && len(t.Proto) > 0:
		return errors.New("grpc: --protoset and --proto both give the types: give one of them")
	case len(t.ImportPaths) > 0 && len(t.Proto) == 0:
		return errors.New("grpc: --import-path says where --proto files' imports are: give the .proto file with --proto")
	}
	for _, dir := range t.ImportPaths {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("grpc: --import-path %s is not a directory", dir)
		}
	}
	return nil
}

// readProto parses t.Proto with what they import, found in t.ImportPaths
// (then in each file's own directory, as ghz does), and Google's
// well-known types. A missing import is named, with the paths searched.
func readProto(ctx context.Context, t Types) (*typeSource, error) {
	paths := slices.Clone(t.ImportPaths)
	var names []string
	given := map[string]string{} // a name compiled: the --proto it is
	for _, p := range t.Proto {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("grpc: --proto: %v", err)
		}
		name, ok := "", false
		for _, dir := range paths {
			if name, ok = under(dir, p); ok {
				break
			}
		}
		if !ok {
			dir := filepath.Dir(p)
			paths = append(paths, dir)
			name, _ = under(dir, p)
		}
		names = append(names, name)
		given[name] = p
	}
	r := &missing{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths, Accessor: open})}
	c := protocompile.Compiler{
		Resolver: r,
		Reporter: reporter.NewReporter(nil, nil), // the first error ends it
	}
	files, err := c.Compile(ctx, names...)
	if err != nil {
		return nil, r.explain(err, t.Proto, paths, given)
	}
	set := new(descriptorpb.FileDescriptorSet)
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		for i := range f.Imports().Len() {
			add(f.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	for _, f := range files {
		add(f)
	}
	return newTypeSource("--proto "+strings.Join(t.Proto, ", "), set)
}

// open opens a file to parse. A path through a file that is not a
// directory (an import path holding a file named as the import's first
// directory) is not there either: the next import path is searched.
func open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	return f, err
}

// under is p's name relative to dir, if dir holds it.
func under(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// missing is a Resolver that keeps the names it did not find.
type missing struct {
	protocompile.Resolver
	mu    sync.Mutex
	names []string
}

func (m *missing) FindFileByPath(path string) (protocompile.SearchResult, error) {
	r, err := m.Resolver.FindFileByPath(path)
	if errors.Is(err, fs.ErrNotExist) {
		m.mu.Lock()
		m.names = append(m.names, path)
		m.mu.Unlock()
	}
	return r, err
}

// explain says why parsing failed, in one line: an import not found names
// the file, the file importing it and the paths searched.
func (m *missing) explain(err error, protos, paths []string, given map[string]string) error {
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	m.mu.Lock()
	names := slices.Clone(m.names)
	m.mu.Unlock()
	if len(names) == 0 {
		return fmt.Errorf("grpc: --proto %s: %s", strings.Join(protos, ", "), msg)
	}
	var searched []string
	for _, p := range paths {
		searched = append(searched, "-I "+p)
	}
	by := ""
	var ferr reporter.ErrorWithPos
	if errors.As(err, &ferr) {
		f := ferr.GetPosition().Filename
		if p, ok := given[f]; ok {
			f = p
		}
		by = f + " imports "
	}
	return fmt.Errorf("grpc: --proto: %s%s, which is in none of the import paths searched (%s): add the directory it is under with --import-path",
		by, names[0], strings.Join(searched, ", "))
}
