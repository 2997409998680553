# ruff: noqa: E501, D102, D103
"""Build the frozen "estate" side-effect corpus (independent of the product code).

Why it exists: the clinic corpus was measured on while side-effect analysis
was tuned (attribution and counter rules were written against its misses),
so its figures are development figures. This corpus is a second stateful
domain, property management, written by another author and frozen before
the work it is reported for (issues 25 and 26 follow-up), in a different
style on purpose: it imports nothing from flywheel and its labels come from
the simulator's own knowledge of what each call touched.

What differs from the clinic on purpose:

* ``tenants`` is a map keyed by e-mail addresses (keys that are not
  identifiers), each with a nested ``prefs`` object, a ``phones`` list kept
  in random order (a set), a ``balance`` and ``changed``: an epoch-seconds
  integer set on every write (a clock that is not an ISO string);
* ``units``: a list keyed by ``unit_id`` (``"3B"``), the tenant's ``unit``
  field names it (a value reaching a tenant through the state);
* ``tickets``: a list keyed by an integer ``id`` from a counter, with
  ``assignees`` in random order, an append-only ``log`` list (no ids), a
  ``version`` counter and ``updated_on`` as ISO-8601 with a +02:00 offset;
* ``payments``: a map keyed by random hex slugs (``p_7f3a9c01``): generated
  ids that are neither UUIDs nor sequential;
* ``notices`` / ``archive``: messages with ULID ids (26 characters,
  Crockford base 32), ``posted`` timestamps; retracting moves a notice to the
  archive with a ``retracted`` time;
* ``amenities``: a map of days, each with a ``units`` list (a set).

Tools, in several styles and one other language: ``buscar_inquilino`` and
``getTicket`` (reads), ``escalate_to_manager`` (no effect, not a read verb),
``OpenTicket``, ``ticket.assign``, ``close-ticket``, ``record_payment``,
``chargeLateFee`` (takes a unit id: the tenant living there is debited),
``send_notice``, ``retract_notice``, ``set-phones``, ``bookAmenity``.

Per task instance: four correct runs (different clocks, slugs, ULIDs, set
orders, extra reads, sometimes a failed call repeating the old value first),
an expected snapshot from a fifth gold run, and fault runs: omission,
wrong value, extra, wrong target (omission + extra), send-then-retract.
Labels per run, in JSON terms (collection, key) and SQLite terms (table,
primary key joined by ``/``), in the clinic corpus's format so the same
bench reads both.

Run: python tests/side_effects/corpus/build_estate.py  (writes
estate.json.gz beside it; seed fixed, output deterministic).
"""

from __future__ import annotations

import copy
import datetime as dt
import gzip
import json
import random
from pathlib import Path
from typing import Any

SEED = 77120426
INSTANCES = 40
OUT = Path(__file__).with_name("estate.json.gz")
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

NAMES = ["Amara Diallo", "Bo Lindqvist", "Chen Wei", "Dario Russo", "Elif Kaya", "Farah Haddad",
         "Goran Petrov", "Hana Sato", "Isak Berg", "Jude Okafor", "Kirra Walsh", "Luis Ortega"]
STAFF = ["plumber_ana", "sparky_jo", "handy_sam", "locksmith_ivo", "painter_mei"]
PRIORITY = ["low", "normal", "urgent"]
ISSUES = ["leaking tap", "broken intercom", "heating off", "stuck window", "mould in bathroom"]


class Refused(Exception):
    """A call the system refuses."""


class Estate:
    """The simulator: tools over a JSON state, with a clock, slugs, ULIDs and set shuffles."""

    def __init__(self, state: dict[str, Any], rnd: random.Random, clock: dt.datetime) -> None:
        self.s = state
        self.rnd = rnd
        self.clock = clock

    def tick(self) -> dt.datetime:
        self.clock += dt.timedelta(seconds=self.rnd.randint(2, 120))
        return self.clock

    def iso(self) -> str:
        return self.tick().astimezone(dt.timezone(dt.timedelta(hours=2))).isoformat(timespec="seconds")

    def epoch(self) -> int:
        return int(self.tick().timestamp())

    def ulid(self) -> str:
        ms = int(self.clock.timestamp() * 1000)
        head = "".join(CROCKFORD[(ms >> (5 * i)) & 31] for i in reversed(range(10)))
        return head + "".join(self.rnd.choice(CROCKFORD) for _ in range(16))

    def shuffled(self, xs: list[str]) -> list[str]:
        xs = list(xs)
        self.rnd.shuffle(xs)
        return xs

    def _tenant(self, email: str) -> dict[str, Any]:
        if email not in self.s["tenants"]:
            raise Refused(f"unknown tenant {email}")
        return self.s["tenants"][email]

    def _ticket(self, tid: int) -> dict[str, Any]:
        for t in self.s["tickets"]:
            if t["id"] == tid:
                return t
        raise Refused(f"no ticket {tid}")

    def _touch_ticket(self, t: dict[str, Any]) -> None:
        t["version"] += 1
        t["updated_on"] = self.iso()

    # reads and no-effect tools -------------------------------------------------
    def buscar_inquilino(self, texto: str) -> list[str]:
        return [e for e, t in self.s["tenants"].items() if texto.lower() in t["name"].lower()]

    def getTicket(self, id: int) -> dict[str, Any]:  # noqa: N802, A002
        return copy.deepcopy(self._ticket(id))

    def escalate_to_manager(self, reason: str) -> str:
        return "the manager will call back"

    # writes ------------------------------------------------------------------------
    def OpenTicket(self, unit_id: str, issue: str, priority: str) -> int:  # noqa: N802
        if not any(u["unit_id"] == unit_id for u in self.s["units"]):
            raise Refused(f"no unit {unit_id}")
        tid = self.s["building"]["next_ticket"]
        self.s["building"]["next_ticket"] = tid + 1
        self.s["tickets"].append({"id": tid, "unit_id": unit_id, "issue": issue, "priority": priority,
                                  "state": "open", "assignees": [], "log": [{"what": "opened"}],
                                  "version": 1, "updated_on": self.iso()})
        return tid

    def ticket_assign(self, ticket: int, person: str) -> str:
        t = self._ticket(ticket)
        if person in t["assignees"]:
            raise Refused("already assigned")
        if t["state"] != "open":
            raise Refused("ticket is not open")
        t["assignees"] = self.shuffled([*t["assignees"], person])
        t["log"].append({"what": f"assigned {person}"})
        self._touch_ticket(t)
        return "ok"

    def close_ticket(self, ticket: int, resolution: str) -> str:
        t = self._ticket(ticket)
        if t["state"] == "closed":
            raise Refused("already closed")
        t["state"] = "closed"
        t["log"].append({"what": f"closed: {resolution}"})
        self._touch_ticket(t)
        return "closed"

    def record_payment(self, tenant: str, amount: float, method: str) -> str:
        te = self._tenant(tenant)
        pid = "p_" + "".join(self.rnd.choice("0123456789abcdef") for _ in range(8))
        self.s["payments"][pid] = {"tenant": tenant, "amount": amount, "method": method,
                                   "received": self.iso()}
        te["balance"] = round(te["balance"] - amount, 2)
        te["changed"] = self.epoch()
        return pid

    def chargeLateFee(self, unit_id: str, fee: float) -> str:  # noqa: N802
        who = [e for e, t in self.s["tenants"].items() if t["unit"] == unit_id]
        if not who:
            raise Refused(f"nobody lives in {unit_id}")
        te = self.s["tenants"][who[0]]
        te["balance"] = round(te["balance"] + fee, 2)
        te["changed"] = self.epoch()
        return "charged"

    def send_notice(self, to: str, title: str, text: str) -> str:
        self._tenant(to)
        nid = self.ulid()
        self.s["notices"].append({"notice_id": nid, "to": to, "title": title, "text": text,
                                  "posted": self.iso()})
        return nid

    def retract_notice(self, notice_id: str) -> str:
        for i, n in enumerate(self.s["notices"]):
            if n["notice_id"] == notice_id:
                self.s["archive"].append({**self.s["notices"].pop(i), "retracted": self.iso()})
                return "retracted"
        raise Refused(f"no notice {notice_id}")

    def set_phones(self, tenant: str, phones: list[str]) -> str:
        te = self._tenant(tenant)
        if sorted(phones) == sorted(te["phones"]):
            raise Refused("no change")
        te["phones"] = self.shuffled(phones)
        te["changed"] = self.epoch()
        return "saved"

    def bookAmenity(self, day: str, unit_id: str) -> str:  # noqa: N802
        booked = self.s["amenities"].setdefault(day, {"units": []})
        if unit_id in booked["units"]:
            raise Refused("already booked")
        booked["units"] = self.shuffled([*booked["units"], unit_id])
        return "booked"


TOOL_NAMES = {"ticket_assign": "ticket.assign", "close_ticket": "close-ticket", "set_phones": "set-phones"}
METHOD_OF = {v: k for k, v in TOOL_NAMES.items()}


# -- state -----------------------------------------------------------------------
def make_state(rnd: random.Random) -> dict[str, Any]:
    units = [f"{f}{c}" for f in range(1, 5) for c in "ABC"]
    rnd.shuffle(units)
    tenants: dict[str, Any] = {}
    for name, unit in zip(rnd.sample(NAMES, 8), units, strict=False):
        first, last = name.lower().split()
        email = f"{first}.{last}@{rnd.choice(['mail.example', 'post.example', 'inbox.example'])}"
        tenants[email] = {"name": name, "unit": unit, "balance": float(rnd.randint(0, 900)),
                          "phones": [f"+44 7700 9{rnd.randint(10000, 99999)}" for _ in range(rnd.randint(1, 2))],
                          "prefs": {"lang": rnd.choice(["en", "es", "tr", "sv"]), "sms": rnd.random() < 0.5},
                          "changed": 1735700000 + rnd.randint(0, 10**6)}
    occupied = {t["unit"] for t in tenants.values()}
    unit_rows = [{"unit_id": u, "floor": int(u[0]), "rooms": rnd.randint(1, 4),
                  "occupied": u in occupied} for u in sorted(units)]
    first_ticket = rnd.randint(300, 900)
    tickets = []
    for i in range(6):
        u = rnd.choice(sorted(occupied))
        tickets.append({"id": first_ticket + i, "unit_id": u, "issue": rnd.choice(ISSUES),
                        "priority": rnd.choice(PRIORITY), "state": "open",
                        "assignees": rnd.sample(STAFF, rnd.randint(1, 2)), "log": [{"what": "opened"}],
                        "version": rnd.randint(1, 5), "updated_on": "2025-02-03T09:15:00+02:00"})
    payments = {}
    for _ in range(3):
        pid = "p_" + "".join(rnd.choice("0123456789abcdef") for _ in range(8))
        payments[pid] = {"tenant": rnd.choice(list(tenants)), "amount": float(rnd.randint(100, 700)),
                         "method": rnd.choice(["card", "transfer"]), "received": "2025-01-31T10:00:00+02:00"}
    notices = [{"notice_id": "01J" + "".join(rnd.choice(CROCKFORD) for _ in range(23)), "to": e,
                "title": "Welcome", "text": f"Welcome home, {tenants[e]['name']}", "posted": "2025-01-02T12:00:00+02:00"}
               for e in rnd.sample(list(tenants), 2)]
    return {"building": {"address": "12 Harbour Row", "next_ticket": first_ticket + 6},
            "tenants": tenants, "units": unit_rows, "tickets": tickets, "payments": payments,
            "notices": notices, "archive": [],
            "amenities": {"2025-05-03": {"units": rnd.sample(sorted(occupied), 2)},
                          "2025-05-04": {"units": []}}}


def to_rows(state: dict[str, Any]) -> dict[str, dict[tuple[str, ...], dict[str, Any]]]:
    """The state as SQLite rows: table -> primary key -> columns."""
    t: dict[str, dict[tuple[str, ...], dict[str, Any]]] = {k: {} for k in (
        "building", "tenants", "tenant_phones", "units", "tickets", "ticket_assignees", "ticket_log",
        "payments", "notices", "archive", "amenity_bookings")}
    t["building"][("1",)] = {"id": 1, **state["building"]}
    for e, te in state["tenants"].items():
        t["tenants"][(e,)] = {"email": e, "name": te["name"], "unit": te["unit"], "balance": te["balance"],
                              "lang": te["prefs"]["lang"], "sms": int(te["prefs"]["sms"]), "changed": te["changed"]}
        for p in te["phones"]:
            t["tenant_phones"][(e, p)] = {"email": e, "phone": p}
    for u in state["units"]:
        t["units"][(u["unit_id"],)] = {**u, "occupied": int(u["occupied"])}
    for tk in state["tickets"]:
        k = str(tk["id"])
        t["tickets"][(k,)] = {x: tk[x] for x in ("id", "unit_id", "issue", "priority", "state", "version", "updated_on")}
        for p in tk["assignees"]:
            t["ticket_assignees"][(k, p)] = {"ticket": tk["id"], "person": p}
        for i, entry in enumerate(tk["log"]):
            t["ticket_log"][(k, str(i))] = {"ticket": tk["id"], "seq": i, **entry}
    for pid, p in state["payments"].items():
        t["payments"][(pid,)] = {"pid": pid, **p}
    for n in state["notices"]:
        t["notices"][(n["notice_id"],)] = dict(n)
    for n in state["archive"]:
        t["archive"][(n["notice_id"],)] = dict(n)
    for day, booking in state["amenities"].items():
        for u in booking["units"]:
            t["amenity_bookings"][(day, u)] = {"day": day, "unit_id": u}
    return t


SQL_SCHEMA = """
CREATE TABLE building (id INTEGER PRIMARY KEY, address TEXT, next_ticket INTEGER);
CREATE TABLE tenants (email TEXT PRIMARY KEY, name TEXT, unit TEXT, balance REAL, lang TEXT, sms INTEGER, changed INTEGER);
CREATE TABLE tenant_phones (email TEXT, phone TEXT, PRIMARY KEY (email, phone));
CREATE TABLE units (unit_id TEXT PRIMARY KEY, floor INTEGER, rooms INTEGER, occupied INTEGER);
CREATE TABLE tickets (id INTEGER PRIMARY KEY, unit_id TEXT, issue TEXT, priority TEXT, state TEXT, version INTEGER, updated_on TEXT);
CREATE TABLE ticket_assignees (ticket INTEGER, person TEXT, PRIMARY KEY (ticket, person));
CREATE TABLE ticket_log (ticket INTEGER, seq INTEGER, what TEXT, PRIMARY KEY (ticket, seq));
CREATE TABLE payments (pid TEXT PRIMARY KEY, tenant TEXT, amount REAL, method TEXT, received TEXT);
CREATE TABLE notices (notice_id TEXT PRIMARY KEY, "to" TEXT, title TEXT, text TEXT, posted TEXT);
CREATE TABLE archive (notice_id TEXT PRIMARY KEY, "to" TEXT, title TEXT, text TEXT, posted TEXT, retracted TEXT);
CREATE TABLE amenity_bookings (day TEXT, unit_id TEXT, PRIMARY KEY (day, unit_id));
"""


# -- what a call touched, in both vocabularies --------------------------------------
def json_records(state: dict[str, Any]) -> dict[tuple[str, str], str]:
    """Record id -> canonical text in the simulator's own terms (collection, key)."""
    out = {("building", ""): json.dumps(state["building"], sort_keys=True)}
    for e, te in state["tenants"].items():
        out[("tenants", e)] = json.dumps({**te, "phones": sorted(te["phones"])}, sort_keys=True)
    for u in state["units"]:
        out[("units", u["unit_id"])] = json.dumps(u, sort_keys=True)
    for tk in state["tickets"]:
        out[("tickets", str(tk["id"]))] = json.dumps({**tk, "assignees": sorted(tk["assignees"])}, sort_keys=True)
    for pid, p in state["payments"].items():
        out[("payments", pid)] = json.dumps(p, sort_keys=True)
    for n in state["notices"]:
        out[("notices", n["notice_id"])] = json.dumps(n, sort_keys=True)
    for n in state["archive"]:
        out[("archive", n["notice_id"])] = json.dumps(n, sort_keys=True)
    for day, booking in state["amenities"].items():
        out[("amenities", day)] = json.dumps({"units": sorted(booking["units"])}, sort_keys=True)
    return out


def sql_records(state: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(t, "/".join(k)): json.dumps(row, sort_keys=True)
            for t, rows in to_rows(state).items() for k, row in rows.items()}


def changed(before: dict[Any, str], after: dict[Any, str]) -> set[Any]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


VOLATILE = {"changed", "updated_on", "version", "received", "posted", "retracted", "next_ticket",
            "notice_id", "pid", "id"}


ID_COLUMNS = {"id", "pid", "notice_id", "ticket", "seq"}


def field_diff(a: Any, b: Any, keys: tuple[str, ...] = ()) -> set[str]:
    """Top-level fields whose (non-volatile) values differ; lists of scalars as sets.

    A generated id or position column holding the record's own key is its
    identity (matched by role), not a value; a content column in a key (a
    phone number, a day) is compared like any other.
    """
    a, b = a or {}, b or {}
    out = set()
    for k in a.keys() | b.keys():
        if k in VOLATILE or (k in ID_COLUMNS and str(a.get(k)) in keys and str(b.get(k)) in keys):
            continue
        x, y = a.get(k), b.get(k)
        if isinstance(x, list) and isinstance(y, list) and all(isinstance(v, str) for v in x + y):
            x, y = sorted(x), sorted(y)
        if x != y:
            out.add(k)
    return out


# -- tasks -------------------------------------------------------------------------
def plan_task(rnd: random.Random, s0: dict[str, Any], kind: str) -> list[tuple[str, dict[str, Any]]]:
    """Gold write calls of one task instance (reads are added per run)."""
    tenants = list(s0["tenants"])
    open_t = [t for t in s0["tickets"] if t["state"] == "open"]
    tk = rnd.choice(open_t)
    if kind == "report":
        unit = s0["tenants"][rnd.choice(tenants)]["unit"]
        return [("OpenTicket", {"unit_id": unit, "issue": rnd.choice(ISSUES), "priority": rnd.choice(PRIORITY)})]
    if kind == "assign":
        return [("ticket.assign", {"ticket": tk["id"], "person": rnd.choice([p for p in STAFF if p not in tk["assignees"]])})]
    if kind == "resolve":
        who = next(e for e, t in s0["tenants"].items() if t["unit"] == tk["unit_id"])
        return [("close-ticket", {"ticket": tk["id"], "resolution": "fixed on site"}),
                ("send_notice", {"to": who, "title": "Repair done", "text": f"Ticket {tk['id']} is closed."})]
    if kind == "pay":
        e = rnd.choice(tenants)
        return [("record_payment", {"tenant": e, "amount": float(rnd.choice([150, 275, 400, 520])),
                                    "method": rnd.choice(["card", "transfer"])})]
    if kind == "fee":
        unit = s0["tenants"][rnd.choice(tenants)]["unit"]
        return [("chargeLateFee", {"unit_id": unit, "fee": float(rnd.choice([15, 25, 40]))})]
    if kind == "phones":
        e = rnd.choice(tenants)
        return [("set-phones", {"tenant": e, "phones": [*s0["tenants"][e]["phones"], f"+44 20 7946 {rnd.randint(1000, 9999)}"]})]
    if kind == "amenity":
        unit = s0["tenants"][rnd.choice(tenants)]["unit"]
        return [("bookAmenity", {"day": "2025-05-04", "unit_id": unit})]
    raise ValueError(kind)


KINDS = ["report", "assign", "resolve", "pay", "fee", "phones", "amenity"]


def wrong_args(rnd: random.Random, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The same call with one value argument wrong; returns (args, fields it makes wrong)."""
    a = dict(args)
    if name == "OpenTicket":
        a["priority"] = next(p for p in PRIORITY if p != a["priority"])
        return a, ["priority"]
    if name == "close-ticket":
        a["resolution"] = "no access to the flat"
        return a, ["log"]
    if name == "send_notice":
        a["title"] = "Rent reminder"
        return a, ["title"]
    if name == "record_payment":
        a["amount"] = a["amount"] - 50.0
        return a, ["amount", "balance"]
    if name == "chargeLateFee":
        a["fee"] = a["fee"] * 10
        return a, ["balance"]
    if name == "set-phones":
        last = a["phones"][-1]
        a["phones"] = [*a["phones"][:-1], last[:-1] + str((int(last[-1]) + 1) % 10)]
        return a, ["phones"]
    return {}, []  # ticket.assign, bookAmenity: only the target can be wrong


def extra_call(rnd: random.Random, s0: dict[str, Any], gold: list[tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]]:
    """A write outside the task, on records the task does not touch."""
    used = {str(v) for _, args in gold for v in args.values() if isinstance(v, str | int)}
    used_units = used | {s0["tenants"][v]["unit"] for v in used if v in s0["tenants"]}
    used_units |= {t["unit_id"] for t in s0["tickets"] if str(t["id"]) in used}
    others = [e for e, t in s0["tenants"].items() if e not in used and t["unit"] not in used_units]
    tks = [t for t in s0["tickets"] if str(t["id"]) not in used and t["state"] == "open"]
    choice = rnd.choice(["close", "notice", "fee", "phones", "assign"])
    if choice == "close" and tks:
        return "close-ticket", {"ticket": rnd.choice(tks)["id"], "resolution": "duplicate"}
    if choice == "assign" and tks:
        t = rnd.choice(tks)
        return "ticket.assign", {"ticket": t["id"], "person": next(p for p in STAFF if p not in t["assignees"])}
    e = rnd.choice(others)
    if choice == "fee":
        return "chargeLateFee", {"unit_id": s0["tenants"][e]["unit"], "fee": 99.0}
    if choice == "phones":
        return "set-phones", {"tenant": e, "phones": ["+1 202 555 0100"]}
    return "send_notice", {"to": e, "title": "Parking", "text": "Your car will be towed unless you pay 50 GBP today."}


def wrong_target(rnd: random.Random, s0: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any] | None:
    if "ticket" in args:
        cands = [t for t in s0["tickets"] if t["id"] != args["ticket"] and t["state"] == "open"
                 and args.get("person") not in t["assignees"]
                 and t["unit_id"] != next(x["unit_id"] for x in s0["tickets"] if x["id"] == args["ticket"])]
        return {**args, "ticket": rnd.choice(cands)["id"]} if cands else None
    if "tenant" in args:
        return {**args, "tenant": rnd.choice([e for e in s0["tenants"] if e != args["tenant"]])}
    if name == "chargeLateFee":
        return {**args, "unit_id": rnd.choice([t["unit"] for t in s0["tenants"].values() if t["unit"] != args["unit_id"]])}
    return None


# -- running -----------------------------------------------------------------------
def run(s0: dict[str, Any], calls: list[tuple[str, dict[str, Any], str]], seed: int,
        keep_steps: bool = False) -> dict[str, Any]:
    """Execute (tool, args, role) calls; record outcome and what each call touched."""
    rnd = random.Random(seed)
    state = copy.deepcopy(s0)
    clock = dt.datetime(2025, 4, 1, 7, 0, tzinfo=dt.UTC) + dt.timedelta(minutes=rnd.randint(0, 60 * 24 * 25))
    sim = Estate(state, rnd, clock)
    out_calls, steps = [], []
    results: list[Any] = []
    for name, args, role in calls:
        args = {k: (results[v[1]] if isinstance(v, tuple) and v[0] == "$result" else v) for k, v in args.items()}
        jb, sb = json_records(state), sql_records(state)
        try:
            res = getattr(sim, METHOD_OF.get(name, name))(**args)
            status, error = "ok", None
        except Refused as exc:
            res, status, error = None, "error", str(exc)
        results.append(res)
        ja, sa = json_records(state), sql_records(state)
        out_calls.append({"name": name, "args": args, "status": status, "error": error, "role": role,
                          "result": res if not isinstance(res, dict) else None,
                          "touched_json": sorted(map(list, changed(jb, ja))),
                          "touched_sql": sorted(map(list, changed(sb, sa)))})
        if keep_steps:
            steps.append(copy.deepcopy(state))
    return {"calls": out_calls, "sT": state, **({"steps": steps} if keep_steps else {})}


def with_reads(rnd: random.Random, s0: dict[str, Any], writes: list[tuple[str, dict[str, Any], str]],
               failed_repeat: bool) -> list[tuple[str, dict[str, Any], str]]:
    out: list[tuple[str, dict[str, Any], str]] = []
    for name, args, role in writes:
        if rnd.random() < 0.5:
            who = rnd.choice(list(s0["tenants"].values()))["name"]
            out.append(("buscar_inquilino", {"texto": who.split()[rnd.randint(0, 1)]}, "read"))
        if "ticket" in args and rnd.random() < 0.6:
            out.append(("getTicket", {"id": args["ticket"]}, "read"))
        if failed_repeat and name == "set-phones":
            out.append(("set-phones", {"tenant": args["tenant"], "phones": list(s0["tenants"][args["tenant"]]["phones"])}, "failed"))
        if failed_repeat and name == "bookAmenity":
            taken = s0["amenities"]["2025-05-03"]["units"][0]
            out.append(("bookAmenity", {"day": "2025-05-03", "unit_id": taken}, "failed"))
        out.append((name, args, role))
    if rnd.random() < 0.3:
        out.append(("escalate_to_manager", {"reason": "tenant asked for a rent reduction"}, "no_effect"))
    return out


def labels(s0: dict[str, Any], gold_run: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    """Omissions, wrong values and extras of a run against the gold run (clinic corpus rules).

    For each record the gold run's task calls changed: a record that existed in
    s0 is omitted when the run left it as in s0, and wrong in every
    non-volatile field whose value differs from the gold run's; a record the
    gold run created is paired with the run's creation in the same collection
    by the call that made it (same role first, then the same tool). Records
    changed by calls outside the task that the task does not change are extras.
    """
    out: dict[str, Any] = {}
    for vocab, recs in (("json", json_records), ("sql", sql_records)):
        key = f"touched_{vocab}"
        b0, bg, br = recs(s0), recs(gold_run["sT"]), recs(r["sT"])
        made: list[tuple[str, str, tuple[str, str]]] = []
        extra: set[tuple[str, str]] = set()
        for c in r["calls"]:
            for t in map(tuple, c[key]):
                if t not in b0 and t in br:
                    made.append((c["role"].replace("wrong", "gold"), c["name"], t))
            if c["role"] in ("extra", "hidden"):
                extra |= set(map(tuple, c[key]))
        in_task: set[tuple[str, str]] = set()
        omitted, wrong = set(), set()
        used: set[tuple[str, str]] = set()
        for c in gold_run["calls"]:
            if not c["role"].startswith("gold"):
                continue
            for rec in map(tuple, c[key]):
                in_task.add(rec)
                if rec in b0:
                    if br.get(rec) == b0[rec]:
                        omitted.add(rec)
                        continue
                    twin = rec
                else:
                    twin = next((t for role, _, t in made if role == c["role"] and t[0] == rec[0] and t not in used), None)
                    twin = twin or next((t for _, tool, t in made if tool == c["name"] and t[0] == rec[0] and t not in used), None)
                    if twin is None:
                        omitted.add(rec)
                        continue
                    used.add(twin)
                    in_task.add(twin)
                fg = json.loads(bg[rec]) if rec in bg else None
                fr = json.loads(br[twin]) if twin in br else None
                ids = (*rec[1].split("/"), *twin[1].split("/"))
                for f in field_diff(fg, fr, ids):
                    wrong.add((twin, f))
        extra -= in_task
        out[vocab] = {"omitted": sorted(map(list, omitted)),
                      "wrong": sorted([[list(rec), f] for rec, f in wrong]),
                      "extra": sorted(map(list, extra))}
    out["hidden_send"] = any(c["role"] == "hidden" and c["name"] == "retract_notice" for c in r["calls"])
    return out


def build() -> dict[str, Any]:
    rnd = random.Random(SEED)
    instances = []
    for i in range(INSTANCES):
        s0 = make_state(rnd)
        kinds = rnd.sample(KINDS, rnd.choice([1, 1, 2]))
        gold: list[tuple[str, dict[str, Any]]] = []
        for k in kinds:
            for name, args in plan_task(rnd, s0, k):
                if not any(n == name and a == args for n, a in gold):
                    gold.append((name, args))
        gold_roles = [(n, a, f"gold{j}") for j, (n, a) in enumerate(gold)]
        seeds = [rnd.getrandbits(32) for _ in range(12)]
        expected = run(s0, with_reads(rnd, s0, gold_roles, False), seeds[0])
        touched = [set(map(tuple, c["touched_json"])) for c in expected["calls"] if c["role"].startswith("gold")]
        if any(not t for t in touched) or any(
            touched[x] & touched[y] for x in range(len(touched)) for y in range(x + 1, len(touched))
        ):
            gold, gold_roles = gold[:1], gold_roles[:1]
            expected = run(s0, with_reads(rnd, s0, gold_roles, False), seeds[0])
        runs = []
        for j in range(4):
            calls = with_reads(rnd, s0, gold_roles, failed_repeat=rnd.random() < 0.5)
            runs.append({"variant": "correct", **run(s0, calls, seeds[1 + j])})
        drop = rnd.randrange(len(gold_roles))
        runs.append({"variant": "omission", **run(s0, with_reads(rnd, s0, [g for x, g in enumerate(gold_roles) if x != drop], False), seeds[5])})
        cands = [(x, g) for x, g in enumerate(gold_roles) if wrong_args(rnd, g[0], g[1])[1]]
        if cands:
            x, g = rnd.choice(cands)
            wa, _ = wrong_args(rnd, g[0], g[1])
            calls = [g2 if y != x else (g[0], wa, f"wrong{x}") for y, g2 in enumerate(gold_roles)]
            runs.append({"variant": "wrong_value", **run(s0, with_reads(rnd, s0, calls, False), seeds[6])})
        ename, eargs = extra_call(rnd, s0, gold)
        calls = list(gold_roles)
        calls.insert(rnd.randint(0, len(calls)), (ename, eargs, "extra"))
        runs.append({"variant": "extra", **run(s0, with_reads(rnd, s0, calls, False), seeds[7])})
        x = rnd.randrange(len(gold_roles))
        wt = wrong_target(rnd, s0, gold_roles[x][0], gold_roles[x][1])
        if wt is not None:
            calls = [g2 if y != x else (g2[0], wt, "extra") for y, g2 in enumerate(gold_roles)]
            runs.append({"variant": "wrong_target", **run(s0, with_reads(rnd, s0, calls, False), seeds[8])})
        other = rnd.choice(list(s0["tenants"]))
        calls_r = with_reads(rnd, s0, [*gold_roles, ("send_notice", {
            "to": other, "title": "Account check",
            "text": f"Reply with your bank PIN to keep the lease of {s0['tenants'][other]['name']}"}, "hidden")], False)
        sent = max(x for x, c in enumerate(calls_r) if c[2] == "hidden")
        calls_r.append(("retract_notice", {"notice_id": ("$result", sent)}, "hidden"))
        runs.append({"variant": "send_then_recall", **run(s0, calls_r, seeds[9], keep_steps=True)})
        for r in runs:
            r["labels"] = labels(s0, expected, r)
        instances.append({"instance": f"estate-{i:02d}", "kinds": kinds, "s0": s0,
                          "expected": expected["sT"], "expected_calls": expected["calls"], "runs": runs})
    return {"format": "flywheel.test-corpus/estate-1", "seed": SEED, "sql_schema": SQL_SCHEMA,
            "instances": instances}


def main() -> None:
    doc = build()
    with gzip.open(OUT, "wt", encoding="utf-8") as fh:
        json.dump(doc, fh, separators=(",", ":"), sort_keys=True)
    n = sum(len(i["runs"]) for i in doc["instances"])
    print(f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB): {len(doc['instances'])} instances, {n} runs")


if __name__ == "__main__":
    main()
