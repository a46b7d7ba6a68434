package gh

import (
	"fmt"

	"github.com/google/go-github/v66/github"
)

// maxPages bounds one listing: 1,000 pages of 100 items is 100,000 comments, pull requests
// or files, past anything real. A fake or broken GitHub that never ends a listing is then
// stopped, and named, long before the publish deadline.
const maxPages = 1000

// pager follows the pages of one listing (the Link header's "next", go-github's NextPage) and
// stops a loop: a next page that was already read (page 1 → 2 → 1), or more than maxPages.
type pager struct {
	what string // the listing, for the error: "comments of o/r#7"
	seen map[int]bool
}

func newPager(what string) *pager { return &pager{what: what, seen: map[int]bool{}} }

// next is the page to ask for after reading page (0 is the first, as GitHub takes it) whose
// response is resp: 0 when the listing is done.
func (p *pager) next(page int, resp *github.Response) (int, error) {
	p.seen[max(page, 1)] = true
	n := resp.NextPage
	switch {
	case n == 0:
		return 0, nil
	case p.seen[n]:
		return 0, fmt.Errorf("list %s: the Link header of page %d names page %d, already read: a pagination loop, stopped after %d pages", p.what, max(page, 1), n,
			len(p.seen))
	case len(p.seen) >= maxPages:
		return 0, fmt.Errorf("list %s: more than %d pages, stopped", p.what, maxPages)
	}
	return n, nil
}
