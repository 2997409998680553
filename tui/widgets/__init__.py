"""Reusable widgets of the reviewer app."""

from flywheel.tui.widgets.banner import Banner
from flywheel.tui.widgets.steps import StepTree

__all__ = ["Banner", "StepTree"]
