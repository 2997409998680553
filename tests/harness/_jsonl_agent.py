"""A scripted agent program speaking the harness's JSON-lines protocol (test stand-in, no model)."""

from __future__ import annotations

import json
import sys


def ask(msg: dict) -> dict:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()
    return json.loads(sys.stdin.readline())


def main() -> None:
    start = json.loads(sys.stdin.readline())
    assert start["type"] == "start"
    ask(
        {
            "type": "chat",
            "model": "scripted",
            "input_messages": [
                {"role": "user", "parts": [{"type": "text", "content": start["prompt"]}]}
            ],
            "output_messages": [],
            "input_tokens": 12,
            "output_tokens": 3,
        }
    )
    ask({"type": "memory_write", "key": "note", "value": {"n": 1}})
    mem = ask({"type": "memory_read", "key": "note"})
    res = ask({"type": "tool_call", "name": "get_balance", "args": {}, "id": "c1"})
    ver = ask({"type": "verify", "id": "c1"})
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    for i in range(n):  # extra calls to exercise the budget
        reply = ask({"type": "tool_call", "name": "get_balance", "args": {}, "id": f"x{i}"})
        if reply["type"] == "budget_exhausted":
            return
    out = {
        "balance": res["output"],
        "memory": mem["value"],
        "deviated": ver["deviated"],
        "plan": start["plan"],
    }
    sys.stdout.write(json.dumps({"type": "final", "output": json.dumps(out)}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
