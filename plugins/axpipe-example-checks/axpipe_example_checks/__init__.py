"""An example third-party check kind for axpipe: ``line-limit``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from axpipe.interfaces import CheckOutcome, CheckRequest, CheckStatus


@dataclass
class LineLimitParams:
    paths: list[str] = field(metadata={"doc": "glob patterns, relative to the workspace (** recurses)"})
    max_lines: int = field(default=400, metadata={"doc": "most lines a file may have", "min": 1})


class LineLimitCheck:
    """Fails when any file matching ``paths`` has more than ``max_lines`` lines."""

    params_schema = LineLimitParams
    needs_command = False

    def describe(self, params: LineLimitParams) -> str:
        return f"no file matching {', '.join(params.paths)} has more than {params.max_lines} lines"

    def run(self, request: CheckRequest) -> CheckOutcome:
        params: LineLimitParams = request.params
        files = sorted({path for pattern in params.paths for path in Path(request.cwd).glob(pattern)
                        if path.is_file()})
        if not files:
            return CheckOutcome(status=CheckStatus.FAILED,
                                summary=f"no file matches {', '.join(params.paths)}: nothing was measured")
        too_long = []
        for path in files:
            with path.open("rb") as handle:
                count = sum(1 for _ in handle)
            if count > params.max_lines:
                too_long.append(f"{path.relative_to(request.cwd)} ({count} lines)")
        if too_long:
            return CheckOutcome(status=CheckStatus.FAILED, details={"files": too_long},
                                summary=f"{len(too_long)} file(s) over {params.max_lines} lines: "
                                        + ", ".join(too_long[:5]))
        return CheckOutcome(status=CheckStatus.PASSED,
                            summary=f"{len(files)} file(s) within {params.max_lines} lines")
