package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// ResolveCall finds method's request type — by the server's reflection
// service (grpc.reflection.v1, falling back to v1alpha), or from a
// FileDescriptorSet file (protoc --descriptor_set_out, as ghz's
// --protoset) or .proto files and their import paths, as from says — and
// encodes data, the request as JSON
// (protojson; "" or "{}" is the empty message), as protobuf. It checks the
// method exists and its streaming kind matches mode (Unary: neither client
// nor server streaming; Stream: both; ServerStream and ClientStream: the
// one side).
//
// method is "package.Service/Method", a leading "/" optional; call is it
// as a :path, "/package.Service/Method", for Config.Call, and message is
// for Config.Message. cfg says
// where the server is and how to reach it (TLS, metadata, DialTimeout),
// and is checked as NewDialer checks it with method as its Call. ctx and
// DialTimeout bound the reflection; a protoset needs no server.
func ResolveCall(ctx context.Context, cfg Config, method, data string, from Types) (call string, message []byte, err error) {
	cfg.Call, cfg.Message = method, nil
	s, err := cfg.settings()
	if err != nil {
		return "", nil, err
	}
	if err := from.Validate(); err != nil {
		return "", nil, err
	}
	service, name, _ := strings.Cut(s.Call[1:], "/")
	var types *typeSource
	switch {
	case from.Protoset != "":
		types, err = readProtoset(from.Protoset)
	case len(from.Proto) > 0:
		types, err = readProto(ctx, from)
	default:
		types, err = reflectTypes(ctx, s, service)
	}
	if err != nil {
		return "", nil, err
	}
	md, err := types.method(service, name)
	if err != nil {
		return "", nil, err
	}
	if kind := streamingKind(md); kind != modeKinds[s.Mode] {
		return "", nil, fmt.Errorf("grpc: %s is %s: call it with -p %s (-p %s calls %s methods)", s.Call[1:], kind, kindModes[kind], s.Mode, modeKinds[s.Mode])
	}
	message, err = encodeJSON(md.Input(), data, types.files)
	if err != nil {
		return "", nil, err
	}
	return s.Call, message, nil
}

// modeKinds are the kinds of method each mode calls; kindModes the other
// way.
var (
	modeKinds = map[Mode]string{Unary: "unary", Stream: "bidi-streaming", ServerStream: "server-streaming", ClientStream: "client-streaming"}
	kindModes = map[string]Mode{"unary": Unary, "bidi-streaming": Stream, "server-streaming": ServerStream, "client-streaming": ClientStream}
)

// streamingKind names md's kind as errors say it.
func streamingKind(md protoreflect.MethodDescriptor) string {
	switch {
	case md.IsStreamingClient() && md.IsStreamingServer():
		return "bidi-streaming"
	case md.IsStreamingClient():
		return "client-streaming"
	case md.IsStreamingServer():
		return "server-streaming"
	}
	return "unary"
}

// encodeJSON encodes data, a message of type in as JSON, as protobuf.
// files resolve what the message refers to by name (the types of Any
// fields, extensions).
func encodeJSON(in protoreflect.MessageDescriptor, data string, files *protoregistry.Files) ([]byte, error) {
	msg := dynamicpb.NewMessage(in)
	if strings.TrimSpace(data) != "" {
		opts := protojson.UnmarshalOptions{Resolver: dynamicpb.NewTypes(files)}
		if err := opts.Unmarshal([]byte(data), msg); err != nil {
			return nil, fmt.Errorf("grpc: --data is not a %s: %v", in.FullName(), err)
		}
	}
	b, err := proto.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("grpc: encoding the %s of --data: %v", in.FullName(), err)
	}
	return b, nil
}

// typeSource is what a server's reflection or a protoset says: the files
// that describe a service, and the services there are.
type typeSource struct {
	where    string // for errors: "127.0.0.1:50051", "protoset x.pb"
	files    *protoregistry.Files
	services []string
}

// method finds service's method name.
func (t *typeSource) method(service, name string) (protoreflect.MethodDescriptor, error) {
	d, _ := t.files.FindDescriptorByName(protoreflect.FullName(service))
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("grpc: %s has no service %s: it has %s", t.where, service, list(t.services))
	}
	if md := sd.Methods().ByName(protoreflect.Name(name)); md != nil {
		return md, nil
	}
	var names []string
	for i := range sd.Methods().Len() {
		names = append(names, string(sd.Methods().Get(i).Name()))
	}
	return nil, fmt.Errorf("grpc: service %s has no method %s: it has %s", service, name, list(names))
}

// list names names for an error.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// readProtoset reads a FileDescriptorSet file: every service in it is
// known.
func readProtoset(path string) (*typeSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("grpc: --protoset: %v", err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("grpc: --protoset %s is not a FileDescriptorSet (protoc --descriptor_set_out): %v", path, err)
	}
	t, err := newTypeSource("protoset "+path, &set)
	if err != nil {
		return nil, fmt.Errorf("grpc: --protoset %s: %v (a set needs every file imported: protoc --include_imports)", path, err)
	}
	return t, nil
}

// newTypeSource makes the types of set known: every service in it.
func newTypeSource(where string, set *descriptorpb.FileDescriptorSet) (*typeSource, error) {
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, err
	}
	t := &typeSource{where: where, files: files}
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		for i := range f.Services().Len() {
			t.services = append(t.services, string(f.Services().Get(i).FullName()))
		}
		return true
	})
	slices.Sort(t.services)
	return t, nil
}

// reflectionMethods are the reflection service's one method, newest
// version first. v1alpha's messages are v1's under another package name,
// the same on the wire: v1's Go types serve both.
var reflectionMethods = []string{
	rpb.ServerReflection_ServerReflectionInfo_FullMethodName,
	rpbalpha.ServerReflection_ServerReflectionInfo_FullMethodName,
}

// reflectionDesc describes ServerReflectionInfo to grpc-go: a
// bidirectional stream, one answer per question.
var reflectionDesc = grpc.StreamDesc{ServerStreams: true, ClientStreams: true}

// reflectTypes asks s's server, by reflection, for the services it has and
// for the file that describes service, with every file it imports.
func reflectTypes(ctx context.Context, s settings, service string) (*typeSource, error) {
	ctx, cancel := context.WithTimeout(ctx, s.DialTimeout)
	defer cancel()
	creds := insecure.NewCredentials()
	if s.TLS.Enabled {
		tc, err := s.TLS.Config(s.host, "h2")
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(tc)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds), grpc.WithNoProxy()} // as the load's clients: no HTTPS_PROXY
	if s.authority != "" {
		opts = append(opts, grpc.WithAuthority(s.authority))
	}
	if s.userAgent != "" {
		opts = append(opts, grpc.WithUserAgent(s.userAgent))
	}
	if len(s.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, metadata.Pairs(s.md...))
	}
	// passthrough: the target is dialed as given, as the load's clients do.
	cc, err := grpc.NewClient("passthrough:///"+s.Target, opts...)
	if err != nil {
		return nil, fmt.Errorf("grpc: grpc-go client for %s: %w", s.Target, err)
	}
	defer cc.Close()

	r := &reflector{target: s.Target}
	var services []string
	for _, m := range reflectionMethods {
		if services, err = r.open(ctx, cc, m); status.Code(err) != codes.Unimplemented {
			break
		}
	}
	switch {
	case status.Code(err) == codes.Unimplemented:
		return nil, fmt.Errorf("grpc: %s has no reflection service: give the types with --protoset FILE (protoc --descriptor_set_out)", s.Target)
	case err != nil:
		return nil, err
	}
	defer r.close()
	if !slices.Contains(services, service) {
		return nil, fmt.Errorf("grpc: %s has no service %s: it has %s", s.Target, service, list(services))
	}
	files, err := r.files(service)
	if err != nil {
		return nil, err
	}
	return &typeSource{where: s.Target, files: files, services: services}, nil
}

// reflector asks questions on one reflection stream.
type reflector struct {
	target string
	st     grpc.ClientStream
	cancel context.CancelFunc
}

// open opens a stream to the reflection method m and asks for the
// services: a server without m says Unimplemented.
func (r *reflector) open(ctx context.Context, cc *grpc.ClientConn, m string) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := cc.NewStream(ctx, &reflectionDesc, m)
	if err != nil {
		cancel()
		return nil, r.explain(err)
	}
	r.st, r.cancel = st, cancel
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
	if err != nil {
		r.close()
		return nil, err
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	slices.Sort(names)
	return names, nil
}

// close ends the stream.
func (r *reflector) close() { r.cancel() }

// ask sends one request and reads its answer. A call that failed keeps
// its status (Unimplemented says there is no such service).
func (r *reflector) ask(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	// SendMsg says io.EOF when the stream has ended: RecvMsg says why.
	if err := r.st.SendMsg(req); err != nil && err != io.EOF {
		return nil, r.explain(err)
	}
	resp := new(rpb.ServerReflectionResponse)
	if err := r.st.RecvMsg(resp); err != nil {
		if err == io.EOF {
			err = status.Error(codes.Unknown, "the reflection stream ended without an answer")
		}
		return nil, r.explain(err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, fmt.Errorf("grpc: %s's reflection service: %s (%v)", r.target, e.GetErrorMessage(), codes.Code(e.GetErrorCode()))
	}
	return resp, nil
}

// ErrUnreachable marks a ResolveCall that could not reach the server: the
// run fails there, the command line is not at fault.
var ErrUnreachable = errors.New("server unreachable")

// explain says in one line what went wrong asking the server, keeping the
// status code.
func (r *reflector) explain(err error) error {
	st := status.Convert(err)
	switch st.Code() {
	case codes.Unimplemented:
		return err
	case codes.Unavailable, codes.DeadlineExceeded:
		return fmt.Errorf("grpc: asking %s for its types by reflection: %s (%v): %w", r.target, st.Message(), st.Code(), ErrUnreachable)
	}
	return fmt.Errorf("grpc: asking %s for its types by reflection: %s (%v)", r.target, st.Message(), st.Code())
}

// files fetches the file that declares service, then every file it
// imports, directly or not, that the server has not sent yet. (grpc-go's
// reflection sends the imports with the file; other servers wait to be
// asked for them by name.)
func (r *reflector) files(service string) (*protoregistry.Files, error) {
	set := new(descriptorpb.FileDescriptorSet)
	known := map[string]bool{}
	add := func(resp *rpb.ServerReflectionResponse) error {
		for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := new(descriptorpb.FileDescriptorProto)
			if err := proto.Unmarshal(b, fd); err != nil {
				return fmt.Errorf("grpc: %s's reflection sent a file descriptor that does not parse: %v", r.target, err)
			}
			if !known[fd.GetName()] {
				known[fd.GetName()] = true
				set.File = append(set.File, fd)
			}
		}
		return nil
	}
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: service}})
	if err != nil {
		return nil, err
	}
	if err := add(resp); err != nil {
		return nil, err
	}
	// set.File grows as imports come: they are checked in turn.
	for i := 0; i < len(set.File); i++ {
		for _, dep := range set.File[i].GetDependency() {
			if known[dep] {
				continue
			}
			resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}})
			if err != nil {
				return nil, err
			}
			if err := add(resp); err != nil {
				return nil, err
			}
			if !known[dep] {
				return nil, fmt.Errorf("grpc: %s's reflection did not send %s, which %s imports: give the types with --protoset FILE", r.target, dep, set.File[i].GetName())
			}
		}
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("grpc: %s's reflection sent types that do not fit together: %v", r.target, err)
	}
	return files, nil
}
