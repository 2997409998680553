"""Reusable widgets of the reviewer app."""

from tui.widgets.banner import Banner
from tui.widgets.steps import StepTree

__all__ = ["Banner", "StepTree"]
