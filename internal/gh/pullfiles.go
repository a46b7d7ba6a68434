package gh

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"
)

// MaxPullFiles is how many files GitHub lists for one pull request
// (GET /repos/{owner}/{repo}/pulls/{number}/files): a pull request that changes more lists
// only its first MaxPullFiles, so a list that long cannot say what the pull request touched.
const MaxPullFiles = 3000

// PullFiles lists the paths pull request number changes, page by page (100 a page): every
// file's name, and a renamed file's previous name too, since the cases that depended on the
// old path are affected as well. complete is false when GitHub listed MaxPullFiles files or
// more: the list may be cut, and a caller must not conclude anything from what is missing.
func (g *Client) PullFiles(ctx context.Context, number int) (paths []string, complete bool, err error) {
	opts := &github.ListOptions{PerPage: 100}
	files := 0
	seen := map[string]bool{}
	pages := newPager(fmt.Sprintf("files of %s/%s#%d", g.Owner, g.Repo, number))
	for {
		page, resp, err := g.API.PullRequests.ListFiles(ctx, g.Owner, g.Repo, number, opts)
		if err != nil {
			return nil, false, fmt.Errorf("list the files of %s/%s#%d: %w", g.Owner, g.Repo, number, err)
		}
		for _, f := range page {
			files++
			for _, name := range []string{f.GetFilename(), f.GetPreviousFilename()} {
				if name != "" && !seen[name] {
					seen[name] = true
					paths = append(paths, name)
				}
			}
		}
		next, err := pages.next(opts.Page, resp)
		if err != nil {
			return nil, false, err
		}
		if next == 0 || files >= MaxPullFiles {
			break
		}
		opts.Page = next
	}
	return paths, files < MaxPullFiles, nil
}
