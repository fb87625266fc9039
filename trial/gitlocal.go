package trial

import (
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
)

// go-git clones a local path (workspace.repo: ../repo, file://...) by running the git
// program's git-upload-pack on it. Served in process instead, a checkout runs no program
// at all: the repository is read with go-git, as the sandbox's changes are.
var localClonesInProcess sync.Once

func cloneLocalInProcess() {
	localClonesInProcess.Do(func() { client.InstallProtocol("file", server.NewServer(localRepos{})) })
}

// localRepos loads a local repository by its path: a work tree (its .git, a linked work
// tree's included) or a bare repository.
type localRepos struct{}

func (localRepos) Load(ep *transport.Endpoint) (storer.Storer, error) {
	r, err := git.PlainOpenWithOptions(ep.Path, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, transport.ErrRepositoryNotFound
	}
	return r.Storer, nil
}
