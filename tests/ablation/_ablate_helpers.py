"""Helpers of the ablation tests."""

from __future__ import annotations

from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class DropSpans(SpanExporter):
    """Stand-in (tests only): drops spans, so statistical tests run thousands of trials fast.

    Trial rows and ablation results still go to the real store; only the
    span table is skipped (the span path is tested in test_ablate.py).
    """

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


#: Low background rates; the real verifier never checks (no recovery), so the
#: hazard of each component shows up in the outcome.
LOW = {
    "wrong_tool": 0.02,
    "forget_constraint": 0.02,
    "wrong_argument": 0.02,
    "misread_result": 0.02,
    "skip_verification": 1.0,
}
