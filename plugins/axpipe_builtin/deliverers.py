"""The built-in deliverers (DESIGN §16): ``github`` through the ``gh`` CLI, ``gitlab`` through ``glab``.

Each runs its CLI once, in the checkout (``gh`` reads the body on stdin, ``glab`` takes it as
an argument), and reports the URL the CLI printed. The CLI's own configuration
(``gh auth login``, ``GH_TOKEN``, ``GH_HOST``; ``glab auth login``, ``GITLAB_TOKEN``)
decides where the request goes and who opens it: axpipe holds no credential.
"""

from __future__ import annotations

import re
from dataclasses import field

from axpipe import interfaces
from axpipe.errors import ExecutableNotFound
from axpipe.records import record

_URL = re.compile(r"https?://\S+")


@record
class GithubParams:
    """Parameters of the ``github`` deliverer."""

    program: str = field(default="gh", metadata={"doc": "the gh program"})
    repo: str | None = field(default=None, metadata={"doc": "[HOST/]OWNER/REPO (default: gh's choice from the "
                                                             "checkout's remotes)"})
    draft: bool = field(default=False, metadata={"doc": "open the pull request as a draft"})
    labels: list[str] = field(default_factory=list, metadata={"doc": "labels to add"})


@record
class GitlabParams:
    """Parameters of the ``gitlab`` deliverer."""

    program: str = field(default="glab", metadata={"doc": "the glab program"})
    repo: str | None = field(default=None, metadata={"doc": "[HOST/]GROUP/PROJECT (default: glab's choice from "
                                                             "the checkout's remotes)"})
    draft: bool = field(default=False, metadata={"doc": "open the merge request as a draft"})
    labels: list[str] = field(default_factory=list, metadata={"doc": "labels to add"})


def _run(argv: list[str], request: interfaces.PullRequest) -> interfaces.Opened:
    from axpipe import process

    try:
        result = process.run(argv, cwd=request.cwd, env=dict(request.env or {}), timeout=request.timeout,
                             stdin=request.body.encode("utf-8"))
    except ExecutableNotFound as error:
        return interfaces.Opened(False, reason=f"{argv[0]} is not installed: {error.message}", command=argv)
    output = result.output.strip()
    existing = _URL.findall(output) if "already exists" in output else []
    if not result.ok and existing:  # a retry after the request was opened: it is the one we want
        return interfaces.Opened(True, url=existing[-1], command=argv)
    if not result.ok:
        tail = " / ".join(output.splitlines()[-3:]) or "no output"
        return interfaces.Opened(False, reason=f"{argv[0]} {result.describe()}: {tail}", command=argv)
    urls = _URL.findall(output)
    if not urls:
        return interfaces.Opened(False, reason=f"{argv[0]} printed no pull request URL: {output[-300:]!r}",
                                 command=argv)
    return interfaces.Opened(True, url=urls[-1], command=argv)


def _shared_flags(params: GithubParams | GitlabParams) -> list[str]:
    """The switches gh and glab spell alike: the repository, a draft, labels."""
    flags = ["--repo", params.repo] if params.repo else []
    if params.draft:
        flags.append("--draft")
    for label in params.labels:
        flags += ["--label", label]
    return flags


class GithubDeliverer:
    """``gh pr create --head BRANCH --base BASE --title TITLE --body-file -``."""

    params_schema = GithubParams

    def argv(self, request: interfaces.PullRequest) -> list[str]:
        params: GithubParams = request.params
        argv = [params.program, "pr", "create", "--head", request.head, "--base", request.base,
                "--title", request.title, "--body-file", "-"]
        return argv + _shared_flags(params)

    def open(self, request: interfaces.PullRequest) -> interfaces.Opened:
        return _run(self.argv(request), request)


class GitlabDeliverer:
    """``glab mr create --source-branch BRANCH --target-branch BASE --title TITLE --description BODY --yes``."""

    params_schema = GitlabParams

    def argv(self, request: interfaces.PullRequest) -> list[str]:
        params: GitlabParams = request.params
        # glab has no "read the description from stdin": the body is an argument (well under
        # the kernel's 128 KiB limit for one argument; the body lists criteria, not logs)
        argv = [params.program, "mr", "create", "--source-branch", request.head, "--target-branch", request.base,
                "--title", request.title, "--description", request.body, "--yes"]
        return argv + _shared_flags(params)

    def open(self, request: interfaces.PullRequest) -> interfaces.Opened:
        return _run(self.argv(request), request)
