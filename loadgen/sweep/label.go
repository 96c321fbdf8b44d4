package sweep

// Label names a step, a search or a maximum for people: "nginx c4t4 1KiB"
// (path, rung, payload), as the progress lines, --ui, the find-max plan
// and its table say it.
func Label(path, rung string, payload int) string {
	return path + " " + rung + " " + FormatSize(payload)
}

// Label is the step's Label (its rate and repeat aside).
func (s Step) Label() string { return Label(s.Path, s.Rung.String(), s.Payload) }

// Label is the search's Label.
func (s FindMaxSearch) Label() string { return Label(s.Path, s.Rung.String(), s.Payload) }

// Label is the maximum's Label.
func (m Max) Label() string { return Label(m.Path, m.Rung, m.Payload) }
