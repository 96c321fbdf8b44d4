package mix

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// isJSON tells a targets file in vegeta's JSON format: its first line
// that is not blank nor a comment is an object.
func isJSON(src []byte) bool {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 && line[0] != '#' {
			return line[0] == '{'
		}
	}
	return false
}

// jsonTarget is a line of vegeta's JSON format, and loadgen's name and
// weight.
type jsonTarget struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Header map[string][]string `json:"header"`
	Body   []byte              `json:"body"` // base64, as Go encodes []byte
	Name   *string             `json:"name"`
	Weight *int                `json:"weight"`
}

// jsonLine reads a line of a file in vegeta's JSON format: one request
// an object, {"method":…,"url":…,"header":{"Name":["value"]},"body":BASE64},
// with loadgen's "name" and "weight"; blank lines and # comments between.
func (p *parser) jsonLine(n int, raw string) error {
	line := strings.TrimSpace(raw)
	if line == "" || line[0] == '#' {
		return nil
	}
	var jt jsonTarget
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&jt); err != nil {
		return p.errf(n, `want one JSON object a line, {"method":"GET","url":"http://…","header":{"Name":["value"]},"body":"BASE64"}: %v`, err)
	}
	if dec.More() {
		return p.errf(n, "more than one JSON object on the line: one request a line")
	}
	if jt.Method == "" {
		jt.Method = "GET"
	}
	if jt.Name != nil || jt.Weight != nil {
		d := &directive{}
		if jt.Name != nil {
			if *jt.Name == "" || len(*jt.Name) > MaxName {
				return p.errf(n, "name %s: a name has 1 to %d bytes", quote(*jt.Name), MaxName)
			}
			d.name = *jt.Name
		}
		if jt.Weight != nil {
			if *jt.Weight < 1 || *jt.Weight > MaxWeight {
				return p.errf(n, "weight %d: want a whole number from 1 to %d (a request never sent is left out)", *jt.Weight, MaxWeight)
			}
			d.weight = *jt.Weight
		}
		p.given, p.givenAt = d, n
	}
	p.end()
	if err := p.request(n, jt.Method+" "+jt.URL); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(jt.Header)) {
		for _, v := range jt.Header[name] {
			if !validText(v) {
				return p.errf(n, "header %s: a control character in its value", quote(name))
			}
			if err := p.header(n, name+": "+v); err != nil {
				return err
			}
		}
	}
	if jt.Body != nil {
		p.cur.Body = jt.Body
	}
	p.end()
	p.state = between
	return nil
}
