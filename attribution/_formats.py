"""Per-framework adapters of the log importer: a framework's conventions -> generic step fields.

A multi-agent log is a list of messages. What a message *is* -- an agent's
words, a code run and its outcome, the page a browser showed, a supervisor's
review, a framework notice -- is written in each framework's own phrases. Those
phrases live here, one adapter per framework, declared as such; the signals
(``_signals``) read only the generic fields an adapter fills in (step kind,
status and error, said vs observed text, a tool call's arguments, and the
``flywheel.*`` attributes below). A log no adapter recognises is read as plain
messages (every message an agent's words).

Generic attributes an adapter may set on a message's span:

- ``flywheel.message.notice = true``: the runtime's words, not an agent's nor
  the world's (``There is no code ... to execute``, ``Next speaker X``);
- ``flywheel.message.acted = true``: the message reports an action the speaker
  took on the world (a browser's click or search), its result in ``observed``;
- ``flywheel.message.ends_run = true``: the speaker declared the run finished
  (AutoGen's ``TERMINATE``, Magentic-One's termination condition);
- ``flywheel.message.plan = true``: the message sets or replaces the plan the
  run follows (a manager's plan handed to the team, an orchestrator's new plan);
- ``flywheel.message.to = NAME``: the message is an instruction addressed to
  another agent;
- ``flywheel.review.progress`` / ``flywheel.review.in_loop`` /
  ``flywheel.review.satisfied`` (``true``/``false``) and ``flywheel.review.reason``:
  a supervising agent's verdict on the run so far (Magentic-One's ledger).

Adapters: ``autogen-groupchat`` (AutoGen group chats with a code executor, e.g.
CaptainAgent) and ``magentic-one``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: A Python ``warnings`` record as a runtime prints it to stderr -- ``FILE.py:LINE:
#: SomethingWarning: message`` and the indented source line after it -- captured into
#: message content by the logging: not the agent's words.
_RUNTIME_WARNING = re.compile(
    r"^[^\n]*\.py:\d+: [A-Za-z_]*Warning: [^\n]*\n?(?:[ \t]+[^\n]*\n?)?", re.MULTILINE
)
#: "Orchestrator (thought)", "Orchestrator (-> WebSurfer)": the agent, then the channel.
_CHANNEL = re.compile(r"^\s*(?P<agent>[^()]+?)\s*\((?P<channel>[^()]*)\)\s*$")
_CODE_BLOCK = re.compile(r"```[\w+-]*\n(.*?)(?:```|\Z)", re.DOTALL)
#: Speakers that run code rather than speak (a terminal, an executor).
EXECUTOR = re.compile(r"terminal|executor|code_?exec", re.IGNORECASE)
#: The last line of a Python traceback: the exception and its message.
_EXCEPTION = re.compile(
    r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Exit|Interrupt)):?(.*)$", re.MULTILINE
)


@dataclass
class Message:
    """One log message as generic step fields (what the importer writes on its span)."""

    speaker: str
    kind: str = "llm"  # llm | tool | other
    said: str = ""  # the speaker's own words (an llm step's output)
    observed: str = ""  # what the speaker was shown (an llm step's input)
    arguments: str = ""  # a tool step's call (the code it ran)
    result: str = ""  # a tool step's output
    status: str = ""  # '' | ok | error
    error: str = ""
    channel: str = ""
    attributes: dict[str, str] = field(default_factory=dict)


def strip_runtime_noise(text: str) -> str:
    """``text`` without Python warning records the runtime printed into it."""
    return _RUNTIME_WARNING.sub("", text).rstrip() if "Warning: " in text else text


def split_speaker(raw: str) -> tuple[str, str]:
    """``(agent, channel)`` of a speaker string (``Orchestrator (-> WebSurfer)``)."""
    m = _CHANNEL.match(raw)
    return (m.group("agent"), m.group("channel").strip()) if m else (raw.strip(), "")


def speaker_of(msg: Mapping[str, Any]) -> tuple[str, str]:
    """The agent that spoke and the message's channel: ``name``, else ``role``."""
    return split_speaker(str(msg.get("name") or msg.get("role") or "unknown"))


def code_of(text: str) -> str:
    """The fenced code blocks of a message, joined (what an executor would run)."""
    return "\n\n".join(b.strip() for b in _CODE_BLOCK.findall(text))


def exception_of(output: str) -> str:
    """The exception a traceback ends with (``NameError: name 'x' is not defined``)."""
    hits = _EXCEPTION.findall(output)
    if not hits:
        return ""
    name, msg = hits[-1]
    return f"{name}:{msg}".strip()


class Adapter:
    """The plain reading: every message is its speaker's words; executors run code."""

    name = "messages"

    def detect(self, history: Sequence[Mapping[str, Any]]) -> bool:
        """Whether this adapter reads ``history`` (the plain one reads anything)."""
        return True

    def message(self, history: Sequence[Mapping[str, Any]], i: int) -> Message:
        """Message ``i`` as generic fields."""
        speaker, channel = speaker_of(history[i])
        text = strip_runtime_noise(str(history[i].get("content") or ""))
        if EXECUTOR.search(speaker):
            return Message(
                speaker,
                "tool",
                result=text,
                arguments=self._code_before(history, i),
                channel=channel,
            )
        return Message(speaker, "llm", said=text, channel=channel)

    @staticmethod
    def _code_before(history: Sequence[Mapping[str, Any]], i: int) -> str:
        """The code the executor at ``i`` ran: that of the nearest earlier message holding any."""
        for j in range(i - 1, -1, -1):
            if EXECUTOR.search(speaker_of(history[j])[0]):
                continue
            code = code_of(str(history[j].get("content") or ""))
            if code:
                return code
        return ""


class AutogenGroupChat(Adapter):
    """AutoGen group chats with a code executor (CaptainAgent's logs).

    The executor answers ``exitcode: N (execution succeeded|failed)`` then ``Code
    output: ...``, or ``There is no code from the last N message for me to
    execute ...`` (a notice: nothing ran), ``unknown language X`` when the code
    block names a language it cannot run (an invalid argument); an agent ends
    the chat with ``TERMINATE``.
    """

    name = "autogen-groupchat"
    _EXIT = re.compile(r"\Aexitcode: (-?\d+)[^\n]*\n?(?:Code output:)?\s?", re.IGNORECASE)
    _NOTHING = re.compile(r"\AThere is no code from the last \d+ message", re.IGNORECASE)
    _TERMINATE = re.compile(r"(?:^|\s)TERMINATE\s*\Z")
    _LANGUAGE = re.compile(r"\Aunknown language \w*", re.IGNORECASE)
    #: The plan section of the manager's task message that opens a nested chat.
    _PLAN = re.compile(r"^#+ Plan for solving the task\s*$", re.MULTILINE)

    def detect(self, history: Sequence[Mapping[str, Any]]) -> bool:
        return any(
            EXECUTOR.search(speaker_of(m)[0])
            and (
                self._EXIT.match(str(m.get("content") or ""))
                or self._NOTHING.match(str(m.get("content") or ""))
            )
            for m in history
        )

    def message(self, history: Sequence[Mapping[str, Any]], i: int) -> Message:
        m = super().message(history, i)
        text = strip_runtime_noise(str(history[i].get("content") or ""))
        if m.kind == "tool":
            if self._NOTHING.match(text):
                return Message(
                    m.speaker, "other", said=text, attributes={"flywheel.message.notice": "true"}
                )
            ex = self._EXIT.match(text)
            if ex:
                out = text[ex.end() :]
                code = int(ex.group(1))
                m.result = out
                m.status = "ok" if code == 0 else "error"
                if code:
                    m.error = exception_of(out) or (
                        # code in a language the executor cannot run
                        f"invalid argument: {out.strip()[:160]}"
                        if self._LANGUAGE.search(out.strip())
                        else f"exit code {code}: {out.strip()[:160]}"
                    )
            return m
        if self._TERMINATE.search(m.said):
            m.said = self._TERMINATE.sub("", m.said).rstrip()
            m.attributes["flywheel.message.ends_run"] = "true"
        if self._PLAN.search(m.said):
            m.attributes["flywheel.message.plan"] = "true"
        return m


class MagenticOne(Adapter):
    """Magentic-One (AutoGen): an Orchestrator, browsing and file agents, a terminal.

    Speakers live in ``role`` with a channel (``Orchestrator (thought)``); the
    Orchestrator's ``Updated Ledger`` JSON is its review of the run; ``Next speaker
    X`` is routing; a browsing agent's message is its action followed by the page
    the browser returned; the terminal answers ``The script ran, then exited with
    Unix exit code: N``; the run ends in ``(termination condition)``, whose message also
    carries the runner's lines (``Max time (1500s) reached.``, ``No agent selected.``,
    completion markers): dropped, the final answer kept.
    """

    name = "magentic-one"
    #: Where a browsing agent's message stops being its words and starts being the page.
    _PAGE = re.compile(
        r"^(?:Here is a screenshot of |The following metadata was extracted from the webpage|"
        r"Automatic OCR of the page screenshot has detected)|\AAddress: \S+\n",
        re.MULTILINE,
    )
    _EXIT = re.compile(
        r"exited with Unix exit code: (-?\d+)\s*(?:Its output was:)?\s?", re.IGNORECASE
    )
    _NOTICE = re.compile(r"\A(?:Next speaker \w+\s*\Z|No code block detected in the messages)")
    _LEDGER = re.compile(r"\AUpdated Ledger:\s*")
    #: The Orchestrator's own words that set a plan, and that it judged the request met.
    _PLAN = re.compile(r"\A(?:Initial plan:|New plan:|Stalled\.+ Replanning)")
    _SATISFIED = re.compile(r"\ARequest satisfied\.")
    #: The runner's lines in the termination message: why it stopped (a round or time limit,
    #: nobody to speak next), its completion markers, a source line a warning left behind.
    #: The runtime's words, not the Orchestrator's: only the final answer is.
    _RUNNER = re.compile(
        r"^(?:Max (?:rounds|time|turns) \([^)\n]*\) reached\.?|No agent selected\.?|"
        r"[A-Z][A-Z_.]* COMPLETE !#!#|[ \t]+response = await [^\n]*)[ \t]*(?:\n|\Z)",
        re.MULTILINE,
    )
    _TO = re.compile(r"\A->\s*(\S.*)\Z")

    def detect(self, history: Sequence[Mapping[str, Any]]) -> bool:
        return any(
            split_speaker(str(m.get("role") or ""))[0] == "Orchestrator"
            and "(" in str(m.get("role"))
            for m in history
        )

    def message(self, history: Sequence[Mapping[str, Any]], i: int) -> Message:
        m = super().message(history, i)
        text = strip_runtime_noise(str(history[i].get("content") or ""))
        if self._NOTICE.match(text):
            return Message(
                m.speaker,
                "other",
                said=text,
                channel=m.channel,
                attributes={"flywheel.message.notice": "true"},
            )
        if m.kind == "tool":
            ex = self._EXIT.search(text)
            if ex:
                code = int(ex.group(1))
                m.result = text[ex.end() :]
                m.status = "ok" if code == 0 else "error"
                if code:
                    m.error = exception_of(m.result) or f"exit code {code}"
            return m
        if self._LEDGER.match(text):
            return self._review(m, text)
        page = self._PAGE.search(text)
        if page is not None:  # the agent acted (typed, clicked, opened) and was shown the result
            m.said, m.observed = text[: page.start()].rstrip(), text[page.start() :]
            m.attributes["flywheel.message.acted"] = "true"
        if m.channel == "termination condition":
            m.said = self._RUNNER.sub("", m.said).strip()
            m.attributes["flywheel.message.ends_run"] = "true"
        if self._PLAN.match(text):
            m.attributes["flywheel.message.plan"] = "true"
        if self._SATISFIED.match(text):
            m.attributes["flywheel.review.satisfied"] = "true"
        to = self._TO.match(m.channel)
        if to:
            m.attributes["flywheel.message.to"] = to.group(1).strip()
        return m

    @staticmethod
    def _review(m: Message, text: str) -> Message:
        try:
            doc = json.loads(text[text.index("{") : text.rindex("}") + 1])
        except ValueError:
            return m
        if not isinstance(doc, dict):
            return m
        attrs = {}
        reasons = []
        for key, attr in (
            ("is_request_satisfied", "satisfied"),
            ("is_in_loop", "in_loop"),
            ("is_progress_being_made", "progress"),
        ):
            v = doc.get(key)
            if isinstance(v, dict) and isinstance(v.get("answer"), bool):
                attrs[f"flywheel.review.{attr}"] = "true" if v["answer"] else "false"
                reasons.append(str(v.get("reason") or ""))
        if not attrs:
            return m
        attrs["flywheel.review.reason"] = " ".join(reasons)[:2000]
        return Message(m.speaker, "other", said="", channel=m.channel, attributes=attrs)


#: Tried in order; the plain reading last.
ADAPTERS: tuple[Adapter, ...] = (MagenticOne(), AutogenGroupChat(), Adapter())


def adapter_for(history: Sequence[Mapping[str, Any]]) -> Adapter:
    """The first adapter that recognises ``history``."""
    return next(a for a in ADAPTERS if a.detect(history))
