"""A local stand-in for GitHub's API that the real ``gh`` program talks to in tests.

``gh`` sends the API calls for the host ``github.localhost`` over plain HTTP
(``http://api.github.localhost/graphql``) and honours ``HTTP_PROXY``, so pointing the proxy
at this server makes every request of ``gh pr create`` arrive here, with nothing reaching
the network. It answers the three GraphQL operations ``gh pr create`` makes (as gh 2.23
sends them: ``RepositoryInfo``, ``PullRequestForBranch``, ``PullRequestCreate``) and records
each request; anything else is answered with a GraphQL error, so a new call shows up as a
failure rather than a silent success.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPOSITORY = {"id": "R_test", "name": "calc", "owner": {"login": "team"}, "hasIssuesEnabled": True,
              "description": "", "hasWikiEnabled": False, "viewerPermission": "WRITE",
              "defaultBranchRef": {"name": "main"}, "parent": None, "mergeCommitAllowed": True,
              "rebaseMergeAllowed": True, "squashMergeAllowed": True}
PR_URL = "https://github.localhost/team/calc/pull/7"


class GitHubStandIn:
    """``with GitHubStandIn() as github:`` serves on a free port; ``github.env(config)`` is what gh needs."""

    def __init__(self, *, existing: bool = False) -> None:
        self.requests: list[dict[str, Any]] = []
        self.existing = existing  # an open pull request for the branch already exists
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append({"path": self.path, "authorization": self.headers.get("authorization"),
                                       **payload})
                self._answer(owner.answer(payload.get("query", "")))

            def do_GET(self) -> None:
                owner.requests.append({"path": self.path, "method": "GET"})
                self._answer({"errors": [{"message": f"the stand-in does not serve GET {self.path}"}]})

            def _answer(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # quiet
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, query: str) -> dict[str, Any]:
        if "query RepositoryInfo" in query:
            return {"data": {"repository": REPOSITORY}}
        if "query PullRequestForBranch" in query:
            nodes = [{"url": PR_URL, "id": "PR_test", "number": 7, "state": "OPEN", "baseRefName": "main",
                      "headRefName": "axpipe/calc", "isCrossRepository": False,
                      "headRepositoryOwner": {"id": "U_team", "login": "team"}}] if self.existing else []
            return {"data": {"repository": {"pullRequests": {"nodes": nodes}, "defaultBranchRef": {"name": "main"}}}}
        if "mutation PullRequestCreate" in query:
            return {"data": {"createPullRequest": {"pullRequest": {"id": "PR_test", "url": PR_URL}}}}
        return {"errors": [{"message": "the stand-in does not answer this query"}]}

    def created(self) -> list[dict[str, Any]]:
        """The input of every ``createPullRequest`` call."""
        return [request["variables"]["input"] for request in self.requests
                if "mutation PullRequestCreate" in request.get("query", "")]

    def env(self, config: Path) -> dict[str, str]:
        return {"GH_HOST": "github.localhost", "GH_TOKEN": "stand-in-token", "GH_CONFIG_DIR": str(config),
                "HTTP_PROXY": f"http://127.0.0.1:{self.server.server_address[1]}", "NO_PROXY": "", "no_proxy": "",
                "GH_PROMPT_DISABLED": "1", "GH_NO_UPDATE_NOTIFIER": "1", "NO_COLOR": "1"}

    def __enter__(self) -> GitHubStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
