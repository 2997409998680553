"""Every key of every screen, in one place (``?``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """\
QUEUE                              CANDIDATE (trace view)
 n      claim the next free one     a    approve as shown (asks y/n)
 Enter  open; claims a free one     x    reject (asks a reason)
 t s    status / source filter      i    needs-info (asks a reason)
 /      slice, reason, task text    s    skip: back to the queue
 o      sort queue/age/cluster      e    task editor   r  redaction view
 m      only mine   l  reload       c    claim (read-only)  o  reopen
TASK EDITOR                         l    reload        Esc  back
 Tab     next field                REDACTION
 Ctrl+S  validate and save          Enter   add the rule typed:
 Esc     back, unsaved edits lost     key:card_holder=NAME
                                      deny:NAME=Lee Smith
 q quits (Ctrl+Q in the editor;     Ctrl+R  re-run with the rules
   asks first when edits unsaved)
MARKERS (colour only repeats them)
 ! [untrusted ...]  argument value from an untrusted source
 x ERR  step in error   mine / @bob  claim holder   !n  n flagged args
 CONFLICT:  someone acted first; reloaded, nothing overwritten
 flags  P provenance S side effect F feedback G golden E edited
           ? or F1 opens this help (F1 also in a text field); Esc closes
"""


class HelpScreen(ModalScreen[None]):
    """The keys, readable at 80x24."""

    CSS_PATH = "help.tcss"
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
        Binding("f1", "close", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        """Lay out the screen."""
        with VerticalScroll(id="help"):
            yield Static(HELP, markup=False)

    def action_close(self) -> None:
        """Back to where ``?`` was pressed."""
        self.dismiss(None)
