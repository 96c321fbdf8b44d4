package sweep

import (
	"fmt"
	"loadgen/internal/closest"
	"reflect"
	"regexp"
	"strings"
)

// fileObjects are a sweep file's objects by the Go type the YAML decoder
// names in its errors (sweep.Spec), with what a message calls them.
var fileObjects = map[string]struct {
	what string
	typ  reflect.Type
}{
	"Spec":    {"sweep", reflect.TypeFor[Spec]()},
	"Path":    {"path", reflect.TypeFor[Path]()},
	"Sidecar": {"sidecar", reflect.TypeFor[Sidecar]()},
	"Watch":   {"watch", reflect.TypeFor[Watch]()},
}

// unknownFieldRE matches the YAML decoder's words for an unknown key.
var unknownFieldRE = regexp.MustCompile(`field (\S+) not found in type sweep\.(\w+)`)

// unknownKeys rewrites the decoder's "field ladderr not found in type
// sweep.Spec" in msg as `ladderr is not a sweep key (did you mean
// "ladder"?)` (closest.DidYouMean), or with the object's keys when none
// is near.
func unknownKeys(msg string) string {
	return unknownFieldRE.ReplaceAllStringFunc(msg, func(m string) string {
		sub := unknownFieldRE.FindStringSubmatch(m)
		key, obj := sub[1], fileObjects[sub[2]]
		if obj.typ == nil {
			return key + " is not a key here"
		}
		keys := yamlKeys(obj.typ)
		if hint := closest.DidYouMean(key, keys); hint != "" {
			return fmt.Sprintf("%s is not a %s key (%s)", key, obj.what, hint)
		}
		return fmt.Sprintf("%s is not a %s key (%s)", key, obj.what, strings.Join(keys, ", "))
	})
}

// yamlKeys are the keys a struct reads from YAML, in field order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name != "" && name != "-" && f.IsExported() {
			keys = append(keys, name)
		}
	}
	return keys
}
