"""Delivery (DESIGN §16): the runner commits each unit on the task branch, checks the branch
contract, pushes, and has an ``axpipe.deliverers`` plugin open the pull request.

| module | concept |
| --- | --- |
| :mod:`~axpipe.deliver.task` | the task's name and summary (the seam to the task file), the templates |
| :mod:`~axpipe.deliver.repo` | the git commands delivery runs |
| :mod:`~axpipe.deliver.record` | ``.axpipe/goals/<goal>/delivery.json``: branch, base, upstream, last attempt |
| :mod:`~axpipe.deliver.refs` | refs and HEAD before a unit: a commit or ref the runner did not make is a hard stop |
| :mod:`~axpipe.deliver.commits` | the task branch checked out, one runner commit per unit with its trailer |
| :mod:`~axpipe.deliver.contract` | the branch contract and the upstream check, before any push |
| :mod:`~axpipe.deliver.body` | the pull request's body from the closing criteria |
| :mod:`~axpipe.deliver.push` | contract, push, pull request: what a completed goal and ``axpipe deliver`` run |
| :mod:`~axpipe.deliver.hooks` | where the goal's units call delivery |
"""
