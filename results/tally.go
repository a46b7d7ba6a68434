package results

// Tally counts requests by status.
type Tally map[Status]int

// TallyRequests counts every request of the results by its stored status.
func TallyRequests(results ...Result) Tally {
	t := Tally{}
	for _, r := range results {
		for _, c := range r.Cases {
			for _, rr := range c.Requests {
				t[rr.Status]++
			}
		}
	}
	return t
}

// Total is the number of requests counted.
func (t Tally) Total() int {
	n := 0
	for _, k := range t {
		n += k
	}
	return n
}

// Failed is the number of requests that neither passed, nor are known failures or flaky,
// nor were skipped or cancelled: failed and errored ones (and any without a valid status).
func (t Tally) Failed() int {
	return t.Total() - t[Pass] - t[Known] - t[Flaky] - t[Skip] - t[Cancelled]
}
