"""Screens: queue, trace (a candidate), redaction, editor, reason prompt, help."""
