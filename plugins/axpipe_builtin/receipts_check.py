"""The ``receipts`` check kind: a goal can require verified review receipts.

It runs a receipt verifier (``cli-review`` by default) on a receipts folder of the
workspace and passes only when the verifier finds no problem; the problems become the
check's output, one line each.
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from axpipe import interfaces
from axpipe.records import record


@record
class ReceiptsParams:
    """Parameters of the ``receipts`` check kind."""

    root: str = field(default=".axpipe/review", metadata={"doc": "folder of round-<n>/ receipts, in the workspace"})
    reviewers: list[str] | None = field(default=None, metadata={
        "doc": "required reviewers (default: every reviewer of the final round)"})
    test_dir: str = field(default="tests", metadata={"doc": "folder regression tests must live in"})
    verifier: str = field(default="cli-review", metadata={"doc": "receipt verifier in axpipe.receipt_verifiers"})
    test_adapter: str | None = field(default=None, metadata={
        "doc": "test adapter for regression tests (default: chosen by file suffix)"})
    python: str | None = field(default=None, metadata={
        "doc": "interpreter for Python regression tests (default: the project's .venv or venv, else python3 on PATH)"})


class ReceiptsCheck:
    """Passes when the receipts under ``root`` verify with no problem."""

    params_schema = ReceiptsParams
    needs_command = False
    # the verdict reads commits (and HEAD), not only files: receipts bind HEAD (axpipe.goal.receipts)
    depends_on_history: ClassVar[bool] = True

    def describe(self, params: ReceiptsParams) -> str:
        return f"the review receipts under {params.root} verify with {params.verifier} and no problem"

    def run(self, request: interfaces.CheckRequest) -> interfaces.CheckOutcome:
        import time

        from axpipe.errors import AxpipeError
        from axpipe.interfaces import ReceiptRequest
        from axpipe.plugin import calls as plugin_calls
        from axpipe.plugin import registry
        from axpipe.review import receipts_text

        params: ReceiptsParams = request.params
        started = time.monotonic()
        artifacts = request.artifacts_dir / f"{request.check_id}-tests" if request.artifacts_dir else None
        try:
            verifier = registry.load("axpipe.receipt_verifiers", params.verifier)
            report = plugin_calls.call(verifier, "verify", ReceiptRequest(
                root=request.cwd / params.root, workspace=request.cwd, reviewers=params.reviewers,
                test_dir=params.test_dir, test_adapter=params.test_adapter, timeout=request.timeout,
                artifacts_dir=artifacts, python=params.python), returns=interfaces.ReceiptReport)
        except AxpipeError as error:
            return interfaces.CheckOutcome(status=interfaces.CheckStatus.ERROR, summary=error.message,
                                           duration=time.monotonic() - started)
        text = receipts_text.render(report, params.root)
        if request.on_output is not None:
            request.on_output(text.encode("utf-8"))
        status = interfaces.CheckStatus.PASSED if report.ok else interfaces.CheckStatus.FAILED
        return interfaces.CheckOutcome(status=status, summary=receipts_text.summary(report), output_tail=text,
                                       output_bytes=len(text.encode("utf-8")), duration=time.monotonic() - started,
                                       details={"problems": [problem.to_json() for problem in report.problems]})
