package study

// SetResult is what one set measured (Set) beside the published
// figures: the study's tables, each filled with the set's (Compare).
type SetResult struct {
	// Where is where the set was measured (Set.Where).
	Where string
	// Headed says whether the study's output heads the set's tables with
	// Where: when the directory measured several sets, or its one set
	// says where (a cluster's).
	Headed bool
	Tables []Table
}

// SetResults are a study's tables, set by set.
type SetResults []SetResult

// Results are a study's tables for each set its directory measured
// (MeasuredSets), every published table filled with the set's figures,
// in the order the output prints them.
func Results(dir string, pub Published) (SetResults, error) {
	sets, err := MeasuredSets(dir, pub)
	if err != nil {
		return nil, err
	}
	return compareSets(pub, sets), nil
}

// compareSets fills pub's tables with each set's figures.
func compareSets(pub Published, sets []Set) SetResults {
	out := make(SetResults, 0, len(sets))
	for _, set := range sets {
		r := SetResult{Where: set.Where, Headed: len(sets) > 1 || set.Where != ""}
		for _, t := range pub.Tables {
			r.Tables = append(r.Tables, Compare(pub, t, set.M))
		}
		out = append(out, r)
	}
	return out
}

// Contended names the orderings of every set's tables not decidable for
// contention (Table.Contended), in the order they are printed: what Exit
// makes 98 of.
func (rs SetResults) Contended() []string {
	var out []string
	for _, r := range rs {
		for _, t := range r.Tables {
			out = append(out, t.Contended()...)
		}
	}
	return out
}
