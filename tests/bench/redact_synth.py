"""Synthetic support-agent traces with known PII and known duplicate groups.

Why: redaction recall and dedupe precision/recall need ground truth, and
production traces with real PII must never be test fixtures. These
generators are seeded (reproducible) and used by the quality tests and by
``bench/promote_throughput.py``; they are test data (workload generators),
not product code, and not stand-ins for any component. Faker is imported lazily (a test/bench dependency).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flywheel.promote._redact_types import TraceStep

#: Entity labels the redaction quality test measures.
PII_LABELS: tuple[str, ...] = ("EMAIL", "PHONE", "CARD", "IBAN", "IP", "SSN", "NAME", "ADDRESS")

_PHONE_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR")
_IBAN_LOCALES = ("de_DE", "fr_FR", "en_GB", "nl_NL", "es_ES", "it_IT")


@dataclass(frozen=True)
class Planted:
    """One PII value placed in a trace (``where`` is ``keyed`` or ``text``)."""

    label: str
    value: str
    step: int
    field: str
    where: str


@dataclass(frozen=True)
class LabelledTrace:
    """A synthetic trace, the PII planted in it, and values that must survive."""

    trace_id: str
    steps: tuple[TraceStep, ...]
    planted: tuple[Planted, ...]
    keep: tuple[str, ...]


def _fakers(seed: int) -> dict[str, Any]:
    from faker import Faker

    out = {}
    for i, loc in enumerate(sorted({"en_US", *_PHONE_LOCALES, *_IBAN_LOCALES})):
        f = Faker(loc)
        f.seed_instance(seed * 1000 + i)
        out[loc] = f
    return out


def pii_traces(n: int, seed: int = 7) -> list[LabelledTrace]:
    """``n`` labelled traces: PII in keyed fields of tool arguments/results and in free text.

    Each trace: a user message (email, phone, card in prose), a CRM lookup
    (keyed email; result with name, phone, address, SSN, card, IP), a money
    transfer to an IBAN, an e-mail whose body embeds phone/card/SSN/email, a
    login-events result with IPv4/IPv6, and an assistant reply embedding the
    IBAN, an email and an IP.
    """
    fk = _fakers(seed)
    rng = random.Random(seed)
    us = fk["en_US"]
    out = []
    for t in range(n):
        name_first, name_last = us.first_name(), us.last_name()
        full = f"{name_first} {name_last}"
        email = us.email()
        email2 = us.email()
        phone = fk[rng.choice(_PHONE_LOCALES)].phone_number()
        phone2 = fk[rng.choice(_PHONE_LOCALES)].phone_number()
        card = us.credit_card_number()
        card_sep = " ".join(card[i : i + 4] for i in range(0, len(card), 4))
        iban = fk[rng.choice(_IBAN_LOCALES)].iban()
        ssn = us.ssn()
        ip4 = us.ipv4_public()
        ip6 = us.ipv6()
        address = us.address()
        payee = us.name()
        cust = f"C-{rng.randint(10000, 99999)}"
        amount = round(rng.uniform(5, 900), 2)
        ts = us.iso8601()
        txn = f"TX{rng.randint(100000, 999999)}"
        planted: list[Planted] = []
        steps: list[TraceStep] = []

        def step(_steps: list[TraceStep] = steps, _t: int = t, **kw: Any) -> int:
            _steps.append(TraceStep(span_id=f"{_t:05d}-{len(_steps)}", **kw))
            return len(_steps) - 1

        user = (
            f"Hi, this is {name_first}. My email is {email} and you can reach me on {phone}. "
            f"Please put the renewal on my card {card_sep} and send {amount} EUR to my landlord."
        )
        i = step(
            input_text=json.dumps(
                [
                    {"role": "system", "content": "You are a support agent."},
                    {"role": "user", "content": user},
                ]
            )
        )
        planted += [
            Planted("EMAIL", email, i, "input_text", "text"),
            Planted("PHONE", phone, i, "input_text", "text"),
            Planted("CARD", card_sep, i, "input_text", "text"),
        ]
        result = {
            "customer_id": cust,
            "name": full,
            "first_name": name_first,
            "last_name": name_last,
            "phone": phone2,
            "address": address,
            "ssn": ssn,
            "card_number": card,
            "last_login_ip": ip4,
            "tier": rng.choice(["gold", "silver", "basic"]),
            "created_at": ts,
        }
        i = step(
            tool_name="get_customer",
            arguments=json.dumps({"email": email}),
            result=json.dumps(result),
        )
        planted += [
            Planted("EMAIL", email, i, "arguments", "keyed"),
            Planted("NAME", full, i, "result", "keyed"),
            Planted("NAME", name_first, i, "result", "keyed"),
            Planted("NAME", name_last, i, "result", "keyed"),
            Planted("PHONE", phone2, i, "result", "keyed"),
            Planted("ADDRESS", address, i, "result", "keyed"),
            Planted("SSN", ssn, i, "result", "keyed"),
            Planted("CARD", card, i, "result", "keyed"),
            Planted("IP", ip4, i, "result", "keyed"),
        ]
        i = step(
            tool_name="send_money",
            arguments=json.dumps(
                {
                    "recipient": iban,
                    "beneficiary": payee,
                    "amount": amount,
                    "subject": f"Rent {txn}",
                    "date": ts[:10],
                }
            ),
            result=json.dumps({"transaction_id": txn, "status": "scheduled"}),
        )
        planted += [
            Planted("IBAN", iban, i, "arguments", "keyed"),
            Planted("NAME", payee, i, "arguments", "keyed"),
        ]
        body = (
            f"Dear customer,\nwe tried to call you on {phone2} about the payment with card "
            f"{card}. Your SSN {ssn} is on file. Replies go to {email2}.\nRegards"
        )
        i = step(
            tool_name="send_email",
            arguments=json.dumps({"recipients": [email2], "subject": "Your payment", "body": body}),
            result=json.dumps({"message_id": f"m-{rng.randint(1, 10**9)}", "status": "sent"}),
        )
        planted += [
            Planted("EMAIL", email2, i, "arguments", "keyed"),
            Planted("PHONE", phone2, i, "arguments", "text"),
            Planted("CARD", card, i, "arguments", "text"),
            Planted("SSN", ssn, i, "arguments", "text"),
        ]
        events = [{"ip": ip4, "at": ts, "ok": False}, {"ip": ip6, "at": ts, "ok": True}]
        i = step(
            tool_name="get_login_events",
            arguments=json.dumps({"customer_id": cust, "limit": 2}),
            result=json.dumps({"events": events, "note": f"new device from {ip6}"}),
        )
        planted += [
            Planted("IP", ip4, i, "result", "keyed"),
            Planted("IP", ip6, i, "result", "keyed"),
            Planted("IP", ip6, i, "result", "text"),
        ]
        reply = (
            f"Done: {amount} EUR goes to {iban} on {ts[:10]}; confirmation sent to {email2}. "
            f"I also noticed a login from {ip4}."
        )
        i = step(output_text=reply)
        planted += [
            Planted("IBAN", iban, i, "output_text", "text"),
            Planted("EMAIL", email2, i, "output_text", "text"),
            Planted("IP", ip4, i, "output_text", "text"),
        ]
        keep = (cust, txn, "get_customer", "send_money", "scheduled", "Your payment", str(amount))
        out.append(LabelledTrace(f"pii-{t:05d}", tuple(steps), tuple(planted), keep))
    return out


# -- dedupe ---------------------------------------------------------------

_Args = Callable[[random.Random], dict[str, Any]]


def _oid(r: random.Random) -> str:
    return f"{r.choice(['O', 'ORD', '#'])}-{r.randint(1000, 999999)}"


#: Tasks: (name, intent paraphrases, [(tool, argument builder)]). ``{id}``,
#: ``{when}`` and ``{amount}`` vary per trace; so do greetings and sign-offs.
TASKS: list[tuple[str, list[str], list[tuple[str, _Args]]]] = [
    (
        "refund_damaged",
        [
            "Please refund order {id}, it arrived damaged",
            "Order {id} came damaged, I want a refund",
            "I need a refund for {id} because the item arrived damaged",
        ],
        [
            ("get_order", lambda r: {"order_id": _oid(r)}),
            ("refund_order", lambda r: {"order_id": _oid(r), "reason": "damaged"}),
        ],
    ),
    (
        "refund_late",
        [
            "Order {id} arrived way too late, refund the shipping please",
            "Refund the shipping fee on {id}, delivery was late",
            "{id} was delivered late - refund shipping",
        ],
        [
            ("get_order", lambda r: {"order_id": _oid(r)}),
            ("refund_shipping", lambda r: {"order_id": _oid(r), "reason": "late_delivery"}),
        ],
    ),
    (
        "track",
        [
            "Where is my package {id}?",
            "Can you track order {id} for me",
            "Track my parcel {id}, it has not arrived",
        ],
        [
            ("get_order", lambda r: {"order_id": _oid(r)}),
            ("track_shipment", lambda r: {"tracking_number": f"1Z{r.randint(10**9, 10**10)}"}),
        ],
    ),
    (
        "cancel_order",
        [
            "Cancel order {id} please",
            "I want to cancel my order {id}",
            "Please cancel {id}, I ordered by mistake",
        ],
        [
            ("get_order", lambda r: {"order_id": _oid(r)}),
            ("cancel_order", lambda r: {"order_id": _oid(r)}),
        ],
    ),
    (
        "change_address",
        [
            "Change the delivery address of order {id}",
            "Ship order {id} to my new address instead",
            "Update the shipping address on {id}",
        ],
        [
            ("get_order", lambda r: {"order_id": _oid(r)}),
            (
                "update_shipping_address",
                lambda r: {"order_id": _oid(r), "address": f"{r.randint(1, 999)} Main St"},
            ),
        ],
    ),
    (
        "reset_password",
        [
            "I forgot my password, please reset it",
            "Reset my password, I cannot log in",
            "Can't log in - password reset needed",
        ],
        [
            ("find_account", lambda r: {"email": f"u{r.randint(1, 10**6)}@example.com"}),
            ("send_password_reset", lambda r: {"account_id": f"A{r.randint(1, 10**6)}"}),
        ],
    ),
    (
        "change_email",
        [
            "Change the email on my account to a new one",
            "Update my account email address please",
            "I want to use a different email for my account",
        ],
        [
            ("find_account", lambda r: {"email": f"u{r.randint(1, 10**6)}@example.com"}),
            (
                "update_account_email",
                lambda r: {
                    "account_id": f"A{r.randint(1, 10**6)}",
                    "new_email": f"n{r.randint(1, 10**6)}@example.org",
                },
            ),
        ],
    ),
    (
        "pay_rent",
        [
            "Send {amount} to my landlord for the rent",
            "Pay my rent of {amount} to the landlord today",
            "Transfer {amount} rent to my landlord",
        ],
        [
            ("get_balance", lambda r: {}),
            (
                "send_money",
                lambda r: {
                    "recipient": "DE89370400440532013000",
                    "amount": r.randint(500, 1500),
                    "subject": "Rent",
                    "date": f"2026-{r.randint(1, 12):02d}-01",
                },
            ),
        ],
    ),
    (
        "schedule_savings",
        [
            "Schedule a monthly transfer of {amount} to my savings",
            "Set up a recurring {amount} savings transfer",
            "Every month move {amount} into savings",
        ],
        [
            ("get_balance", lambda r: {}),
            (
                "schedule_transaction",
                lambda r: {
                    "recipient": "DE02120300000000202051",
                    "amount": r.randint(50, 500),
                    "recurring": True,
                    "subject": "Savings",
                },
            ),
        ],
    ),
    (
        "dispute_charge",
        [
            "There is a charge of {amount} I do not recognise on {when}, dispute it",
            "Dispute the {amount} transaction from {when}, it wasn't me",
            "I want to dispute an unknown {amount} charge",
        ],
        [
            (
                "list_transactions",
                lambda r: {"since": f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}", "n": 20},
            ),
            (
                "open_dispute",
                lambda r: {
                    "transaction_id": f"TX{r.randint(10**5, 10**6)}",
                    "reason": "unrecognised",
                },
            ),
        ],
    ),
    (
        "book_meeting",
        [
            "Book a meeting with the sales team on {when}",
            "Schedule a call with sales for {when}",
            "Set up a sales meeting {when}",
        ],
        [
            (
                "get_calendar",
                lambda r: {"day": f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"},
            ),
            (
                "create_event",
                lambda r: {
                    "title": "Sales meeting",
                    "start": f"2026-05-{r.randint(1, 28):02d}T10:00",
                    "participants": [f"s{r.randint(1, 99)}@corp.example"],
                },
            ),
        ],
    ),
    (
        "cancel_meeting",
        [
            "Cancel my meeting on {when}",
            "Please remove the event on {when} from my calendar",
            "Drop the {when} meeting",
        ],
        [
            (
                "get_calendar",
                lambda r: {"day": f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"},
            ),
            ("cancel_event", lambda r: {"event_id": f"ev_{r.randint(1, 10**6)}"}),
        ],
    ),
    (
        "summarise_inbox",
        [
            "Summarise my unread emails",
            "Give me a summary of unread mail in my inbox",
            "What do my unread emails say? Summarise them",
        ],
        [("search_emails", lambda r: {"query": "is:unread", "limit": r.choice([10, 20, 50])})],
    ),
    (
        "forward_invoice",
        [
            "Forward the latest invoice from {when} to accounting",
            "Send the invoice email of {when} to accounting",
            "Please forward the newest invoice to the accounting team",
        ],
        [
            ("search_emails", lambda r: {"query": "invoice", "limit": 1}),
            (
                "forward_email",
                lambda r: {"email_id": f"{r.randint(1, 10**6)}", "to": "accounting@corp.example"},
            ),
        ],
    ),
    (
        "upgrade_plan",
        [
            "Upgrade my subscription to the premium plan",
            "Move me to premium please",
            "I'd like to upgrade to the premium subscription",
        ],
        [
            ("get_subscription", lambda r: {"customer_id": f"C-{r.randint(10**4, 10**5)}"}),
            (
                "change_plan",
                lambda r: {"customer_id": f"C-{r.randint(10**4, 10**5)}", "plan": "premium"},
            ),
        ],
    ),
    (
        "downgrade_plan",
        [
            "Downgrade my subscription to the basic plan",
            "Switch me to basic, premium is too expensive",
            "Please move my subscription down to basic",
        ],
        [
            ("get_subscription", lambda r: {"customer_id": f"C-{r.randint(10**4, 10**5)}"}),
            (
                "change_plan",
                lambda r: {"customer_id": f"C-{r.randint(10**4, 10**5)}", "plan": "basic"},
            ),
        ],
    ),
]

_GREETINGS = ["", "Hi, ", "Hello! ", "Hey there. ", "Good morning, ", "Hi team - "]
_SIGNOFFS = ["", " Thanks!", " Thank you.", " Cheers", " asap please", " - {first}"]
_WHEN = [
    "2026-03-14",
    "March 3rd",
    "next Tuesday",
    "14/03/2026",
    "tomorrow at 10:30",
    "2026-05-02T09:00:00Z",
]
_FIRSTS = ["Ana", "Ben", "Chloe", "Dev", "Eva", "Femi", "Gus", "Hana", "Ivan", "Jo"]

_VERBS = (
    "check update create delete list send fetch book cancel verify approve renew assign merge "
    "export import archive restore schedule notify"
).split()
_NOUNS = (
    "invoice order ticket account user device policy report refund shipment booking contract "
    "payment card subscription meeting document folder project task alert quota license backup "
    "server volume bucket record customer supplier warehouse route driver vehicle claim "
    "prescription appointment patient lab room table menu coupon review rating profile "
    "password token key webhook pipeline build release branch commit issue comment"
).split()
_WORDS = (
    "urgent monthly annual weekly broken missing duplicate overdue pending blocked premium basic "
    "shared private public internal external legacy primary secondary regional global local "
    "north south east west red green blue first last new old large small quick careful "
    "partial full extra default custom manual automatic temporary permanent"
).split()


def _random_task(rng: random.Random) -> tuple[list[str], list[tuple[str, list[str], str]]]:
    """An invented task: intent content words and a tool path with argument keys."""
    words = [rng.choice(_VERBS), rng.choice(_NOUNS)] + rng.sample(_WORDS, 4) + [rng.choice(_NOUNS)]
    tools = []
    for _ in range(rng.randint(2, 4)):
        keys = rng.sample(
            ["id", "name_ref", "scope", "mode", "limit", "since", "target", "kind"], 2
        )
        tools.append((f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS)}", keys, rng.choice(_WORDS)))
    return words, tools


def _random_member(
    rng: random.Random, task: tuple[list[str], list[tuple[str, list[str], str]]]
) -> list[TraceStep]:
    words, tools = task
    w = list(words)
    w[rng.randrange(2, len(w))] = rng.choice(_WORDS)  # one wording change
    if rng.random() < 0.5:
        w.insert(rng.randrange(len(w)), rng.choice(["please", "now", "again", "the", "my"]))
    intent = (
        rng.choice(_GREETINGS)
        + " ".join(w)
        + f" {_oid(rng)}"
        + rng.choice(_SIGNOFFS).format(first=rng.choice(_FIRSTS))
    )
    steps = [TraceStep(span_id="0", input_text=intent)]
    for j, (tool, keys, mode) in enumerate(tools):
        args: dict[str, Any] = {keys[0]: _oid(rng), keys[1]: mode, "at": rng.choice(_WHEN)}
        steps.append(
            TraceStep(
                span_id=str(j + 1),
                tool_name=tool,
                arguments=json.dumps(args),
                result=json.dumps({"ok": True, "ref": rng.randint(1, 10**9)}),
            )
        )
    steps.append(TraceStep(span_id="z", output_text=f"Done ({rng.randint(1, 10**6)})."))
    return steps


def duplicate_traces(
    n: int, per_group: int = 5, seed: int = 11
) -> list[tuple[str, str, list[TraceStep]]]:
    """``n`` traces in ``per_group`` near-duplicate groups: ``(trace_id, group, steps)``, shuffled.

    The first ``len(TASKS)`` groups are the hand-written support tasks above
    (members differ in paraphrase, greeting, sign-off, ids, amounts, dates and
    tool results); further groups are invented tasks (random tool path,
    argument keys and intent words; members differ in one intent word, filler
    words, ids, dates and results), which gives the long tail of distinct
    tasks a large workload needs.
    """
    rng = random.Random(seed)
    out: list[tuple[str, str, list[TraceStep]]] = []
    n_groups = max(1, -(-n // per_group))
    for g in range(n_groups):
        if g < len(TASKS):
            name, intents, tools = TASKS[g]
            group = name
            members = []
            for _ in range(per_group):
                intent = (
                    rng.choice(_GREETINGS)
                    + rng.choice(intents).format(
                        id=_oid(rng), amount=f"{rng.randint(5, 2000)} EUR", when=rng.choice(_WHEN)
                    )
                    + rng.choice(_SIGNOFFS).format(first=rng.choice(_FIRSTS))
                )
                steps = [TraceStep(span_id="0", input_text=intent)]
                for j, (tool, make) in enumerate(tools):
                    steps.append(
                        TraceStep(
                            span_id=str(j + 1),
                            tool_name=tool,
                            arguments=json.dumps(make(rng)),
                            result=json.dumps({"ok": True, "ref": rng.randint(1, 10**9)}),
                        )
                    )
                steps.append(TraceStep(span_id="z", output_text=f"Done ({rng.randint(1, 10**6)})."))
                members.append(steps)
        else:
            group = f"task{g}"
            task = _random_task(rng)
            members = [_random_member(rng, task) for _ in range(per_group)]
        for k, steps in enumerate(members):
            if len(out) < n:
                out.append((f"{group}/{k}", group, steps))
    rng.shuffle(out)
    return out
