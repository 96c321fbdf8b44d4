package envoy

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// validator is what protoc-gen-validate generates on every Envoy message.
type validator interface{ ValidateAll() error }

// Check runs ValidateAll on m and on every message packed in an Any
// inside it (typed_config, typed_extension_protocol_options …), at any
// depth: ValidateAll stops at an Any, whose contents it cannot see. An
// Any whose type is not linked in is an error too.
func Check(m proto.Message) error {
	return check(m.ProtoReflect(), string(m.ProtoReflect().Descriptor().FullName()))
}

func check(m protoreflect.Message, path string) error {
	msg := m.Interface()
	if a, ok := msg.(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			return fmt.Errorf("envoy: %s: %s: %w", path, a.GetTypeUrl(), err)
		}
		return check(inner.ProtoReflect(), path+"("+string(inner.ProtoReflect().Descriptor().FullName())+")")
	}
	if v, ok := msg.(validator); ok {
		if err := v.ValidateAll(); err != nil {
			return fmt.Errorf("envoy: %s: %s", path, firstLine(err))
		}
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		name := path + "." + string(fd.Name())
		switch {
		case fd.IsList():
			for i := range v.List().Len() {
				if err = check(v.List().Get(i).Message(), fmt.Sprintf("%s[%d]", name, i)); err != nil {
					return false
				}
			}
		case fd.IsMap():
			if fd.MapValue().Kind() != protoreflect.MessageKind {
				return true
			}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				err = check(mv.Message(), fmt.Sprintf("%s[%v]", name, k.Interface()))
				return err == nil
			})
		default:
			err = check(v.Message(), name)
		}
		return err == nil
	})
	return err
}

// firstLine is one error of a ValidateAll multi-error.
func firstLine(err error) string {
	type multi interface{ AllErrors() []error }
	var me multi
	if errors.As(err, &me) && len(me.AllErrors()) > 0 {
		return me.AllErrors()[0].Error()
	}
	return err.Error()
}
