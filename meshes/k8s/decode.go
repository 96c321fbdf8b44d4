package k8s

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// DecodeStrict reads a multi-document YAML stream into typed objects of
// the scheme, as strictly as `kubectl apply --validate=strict`: an unknown
// kind, an unknown field or a duplicate field is an error naming the
// document.
func DecodeStrict(data []byte) ([]runtime.Object, error) {
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	dec := strictCodecs(s).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []runtime.Object
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		out = append(out, obj)
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}
