package gh

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"
)

// Identity finds the account the token acts as, and says how it knows: the author its
// comments will have, so that only those are ever edited or deleted (owns).
//
// GET /user answers for a user's token (a personal access token, classic or fine-grained):
// that user, with its ID. An installation token is refused by GET /user with 403 "Resource
// not accessible by integration", and so is every way REST has to name an App from one: GET
// /app and GET /repos/{o}/{r}/installation need the App's JWT, not an installation token
// (https://docs.github.com/rest/apps/apps#get-the-authenticated-app: "You must use a JWT to
// access this endpoint"; renovatebot/renovate#20033 and
// joshjohanning/bulk-github-repo-settings-sync-action#194 met both refusals). GraphQL's
// viewer ("the currently authenticated user") answers for every token kind: the App's bot
// account, <app-slug>[bot], for an App's installation token (#194 above shows it), and
// github-actions[bot] for the workflow's GITHUB_TOKEN, which is the GitHub Actions App's
// installation token. A bot's login ends in [bot], which no user's login can (GitHub allows
// only letters, digits and hyphens in them), so a bot is told by its login alone. Anything
// else (no answer, 401, 5xx, a GraphQL error) is an error: the caller then publishes
// without an identity, creating a comment and never editing or deleting one.
//
// GitHub API docs: https://docs.github.com/rest/users/users#get-the-authenticated-user
// GitHub API docs: https://docs.github.com/graphql/reference/queries#viewer
//
//meta:operation GET /user
//meta:operation POST /graphql
func (g *Client) Identity(ctx context.Context) (Identity, string, error) {
	u, _, err := g.API.Users.Get(ctx, "")
	if err == nil {
		if u.GetLogin() == "" || u.GetID() == 0 {
			return Identity{}, "", errors.New("find the token's account: GET /user answered no login or id")
		}
		return Identity{Login: u.GetLogin(), ID: u.GetID()}, "GET /user: the token acts as " + u.GetLogin(), nil
	}
	var gerr *github.ErrorResponse
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	if !errors.As(err, &gerr) || errors.As(err, &rl) || errors.As(err, &abuse) ||
		gerr.Response == nil || gerr.Response.StatusCode != http.StatusForbidden {
		return Identity{}, "", fmt.Errorf("find the token's account (GET /user): %w", err)
	}
	login, err := g.viewer(ctx)
	if err != nil {
		return Identity{}, "", fmt.Errorf("find the token's account: GET /user refused an installation token (403), and %w", err)
	}
	const refused = "GET /user refused an installation token (403): "
	switch {
	case strings.EqualFold(login, ActionsBot.Login):
		return ActionsBot, refused + "the workflow's GITHUB_TOKEN, which writes as github-actions[bot] (GraphQL viewer)", nil
	case strings.HasSuffix(login, "[bot]"):
		return Identity{Login: login}, refused + "a GitHub App's, which writes as " + login + " (GraphQL viewer)", nil
	}
	return Identity{Login: login}, refused + "GraphQL's viewer is " + login, nil
}

// viewerQuery asks GraphQL who the token acts as.
const viewerQuery = "query { viewer { login } }"

// viewer is the login of GraphQL's viewer: the account the token acts as.
func (g *Client) viewer(ctx context.Context) (string, error) {
	req, err := g.API.NewRequest(http.MethodPost, g.graphQLURL(), map[string]string{"query": viewerQuery})
	if err != nil {
		return "", fmt.Errorf("GraphQL viewer: %w", err)
	}
	var out struct {
		Data struct {
			Viewer struct {
				Login string `json:"login"`
			} `json:"viewer"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := g.API.Do(ctx, req, &out); err != nil {
		return "", fmt.Errorf("GraphQL viewer (POST %s): %w", req.URL.Path, err)
	}
	if len(out.Errors) > 0 {
		return "", fmt.Errorf("GraphQL viewer: %.200s", out.Errors[0].Message)
	}
	if out.Data.Viewer.Login == "" {
		return "", errors.New("GraphQL viewer: no login in the answer")
	}
	return out.Data.Viewer.Login, nil
}

// graphQLURL is GitHub's GraphQL endpoint beside the REST API: https://api.github.com/graphql,
// or a GHES server's https://HOST/api/graphql, whose REST API is under /api/v3/
// (https://docs.github.com/enterprise-server@latest/graphql/guides/forming-calls-with-graphql#the-graphql-endpoint).
func (g *Client) graphQLURL() string {
	u := *g.API.BaseURL
	if strings.HasSuffix(u.Path, "/api/v3/") {
		u.Path = strings.TrimSuffix(u.Path, "v3/") + "graphql"
	} else {
		u.Path += "graphql"
	}
	return u.String()
}
