package report

import (
	_ "embed"
	"fmt"
	"strings"
	"time"
)

func buildSection(i int, s *Sweep, colors map[string]string) *section {
	sec := &section{ID: fmt.Sprintf("s%d", i+1)}
	if s.Single() {
		sec.Title = "Run " + s.Name
		sec.Lead = strings.Join(s.describe(), " · ")
		sec.Run = buildRun(sec.ID, s, colors)
		return sec
	}
	sec.Title = "Sweep " + s.Name
	sec.Lead = strings.Join(s.describe(), " · ")
	t := newTable(s.Baseline(), s.Steps, s.Hops())
	if n := noBaselineNote(s.Baseline(), Cells(s.Steps)); n != "" {
		sec.Notes = append(sec.Notes, n)
	}
	shown, _ := t.choose(0, true)
	var figures []int // the columns between path and flags
	for _, k := range shown {
		if key := t.cols[k].key; key != "step" && key != "path" && key != "flags" {
			figures = append(figures, k)
		}
		if t.cols[k].key == "msgs/s" {
			sec.MessagesNote = "Messages: of the streamed answers, medians over repeats; " + messagesNote + " (— no answer had two)."
		}
	}
	var groups []headGroup
	var heads []string
	for _, k := range figures {
		col := t.cols[k]
		if n := len(groups); col.group != "" && n > 0 && groups[n-1].Name == col.group {
			groups[n-1].Span++
		} else {
			groups = append(groups, headGroup{Name: col.group, Span: 1, Single: col.group == ""})
		}
		if col.group == "" {
			groups[len(groups)-1].Name = htmlHead(col)
		} else {
			heads = append(heads, htmlHead(col))
		}
	}
	for j, tb := range t.blocks {
		b := tb.block
		bv := &blockView{ID: fmt.Sprintf("%s-b%d", sec.ID, j+1), Title: b.Title(), Groups: groups, Heads: heads, Span: len(figures)}
		stats := map[*Cell]CellStats{}
		for k, c := range tb.cells {
			stats[c] = tb.stats[k]
		}
		bv.Charts = blockCharts(bv.ID, s, b, stats, colors, t.unit)
		prev := ""
		for k, c := range tb.cells {
			st := tb.stats[k]
			tr := tableRow{Rung: c.Rung, Path: c.Path, Color: colors[c.Path], Baseline: c.Path == s.Baseline(),
				FirstOfRung: c.Rung != prev}
			prev = c.Rung
			switch {
			case !st.OK:
				tr.Failed = "failed: " + orText(oneLine(st.Failed, 200), "no result")
			case st.Unmeasured:
				tr.Failed = "interrupted before it measured anything"
			default:
				for _, f := range figures {
					v := micro(tb.rows[k][f])
					switch key := t.cols[f].key; {
					case key == "rate" && !t.unit.stream:
						v = thousands(st.RPS)
					case key == "msgs" && st.Messages != nil:
						v = thousands(st.Messages.Count)
					case key == "msgs/s" && st.Messages != nil:
						v = thousands(st.Messages.PerSec)
					}
					tr.Cells = append(tr.Cells, v)
				}
			}
			for _, f := range st.Flags {
				tr.Flags = append(tr.Flags, flagView{string(f), FlagMeaning(string(f))})
			}
			bv.Rows = append(bv.Rows, tr)
		}
		bv.OverTime, bv.OverTimeOpen = stepsOverTime(bv.ID, tb.cells, colors)
		bv.Placement = placementLines(tb.cells)
		sec.Blocks = append(sec.Blocks, bv)
	}
	return sec
}

// micro writes microseconds as µs (the tables keep wrk's "us").
func micro(s string) string {
	if strings.HasSuffix(s, "us") {
		return strings.TrimSuffix(s, "us") + "µs"
	}
	return s
}

func envFor(s *Sweep) envView {
	e := s.Env()
	ev := envView{Name: s.Name}
	add := func(k, v string) {
		if v != "" {
			ev.Facts = append(ev.Facts, fact{k, v, ""})
		}
	}
	add("Host", hostnames(e.Hostname))
	if e.NumCPU > 0 {
		add("CPU", fmt.Sprintf("%d × %s (GOMAXPROCS %d)", e.NumCPU, orDash(e.CPUModel), e.GOMAXPROCS))
	}
	add("OS", strings.TrimSpace(e.OS+"/"+e.Arch))
	add("Kernel", e.Kernel)
	add("Go", e.GoVersion)
	add("loadgen", e.Version)
	if s.Manifest != nil {
		add("Created", s.Manifest.Created.UTC().Format(time.RFC3339))
		sp := s.spec()
		add("Protocol", sp.Protocol)
		add("Endpoint", sp.Endpoint)
		add("Ladder", strings.Join(sp.Ladder, " "))
		if sp.Duration != "" {
			d := sp.Duration + " per step"
			if sp.Warmup != "" && sp.Warmup != "0s" {
				d += ", warm-up " + sp.Warmup
			}
			if sp.Repeats > 0 {
				d += ", " + plural(sp.Repeats, "repeat")
			}
			add("Duration", d)
		}
		if sp.Timeout != "" && sp.Timeout != "0s" {
			add("Timeout", sp.Timeout)
		}
		for _, p := range sp.Paths {
			v := p.URL
			if p.Baseline {
				v += " (baseline)"
			}
			if len(p.Watch) > 0 && string(p.Watch) != "null" {
				v += " · watch " + compactJSON(p.Watch)
			}
			ev.Paths = append(ev.Paths, fact{p.Name, v, ""})
		}
		if len(sp.Target) > 0 && string(sp.Target) != "null" {
			ev.Paths = append(ev.Paths, fact{"target", "watch " + compactJSON(sp.Target), ""})
		}
	} else if len(s.Steps) > 0 && s.Steps[0].Run != nil {
		g := s.Steps[0].Run.Generator
		add("Generator", fmt.Sprintf("%.2f CPU-s, %.0f%% of %.0f CPUs, peak RSS %s", g.CPUSeconds, 100*g.Utilization, g.CPUs, fmtMiB(g.PeakRSS)))
	}
	return ev
}

func compactJSON(b []byte) string {
	s := strings.NewReplacer("\n", "", " ", "", `"`, "").Replace(string(b))
	return s
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
