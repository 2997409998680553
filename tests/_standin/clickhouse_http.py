"""A stand-in for tests: ClickHouse's HTTP interface served over chDB. NOT a ClickHouse server.

No current ClickHouse server binary can be installed on the build machines
(Debian ships 18.16, without ``Map``), so the store's server path is tested
against this small HTTP front end instead. It speaks the part of ClickHouse's
HTTP protocol that clickhouse-connect uses, so the client's real wire
protocol is exercised: the query in the ``query`` URL parameter, the body, or
a multipart form; bound parameters as ``param_<name>`` (ClickHouse-escaped
text, handed to chDB's ``params``); settings as URL parameters (applied with
``SET`` around each statement); ``database``; Native/Arrow/any format for
results and ``INSERT ... FORMAT <fmt>`` bodies (run as ``FROM INFILE`` on a
temporary file); ``Content-Encoding`` and ``Accept-Encoding`` lz4 (frame),
zstd, gzip and deflate; chunked request bodies; ``/ping``; the
``X-ClickHouse-*`` response headers; errors as HTTP 4xx/5xx with the body
``Code: N. DB::Exception: ...`` and ``X-ClickHouse-Exception-Code``.

What it does not do (a real server does): authentication (any user and
password are accepted), session state per ``session_id`` (one chDB session
is shared and every request runs under one lock), the Native block-info
header of ``client_protocol_version`` (ignored, so clickhouse-connect's probe
falls back to protocol 0), progress headers, external data, query
cancellation, and streaming (each result is built whole, then sent).

Run: ``python -m tests._standin.clickhouse_http --host 127.0.0.1 --port PORT --path DIR``
(``--port 0`` picks a free port); it prints one line
``clickhouse-http stand-in ready on http://HOST:PORT`` once it accepts requests.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import uuid
import zlib
from dataclasses import dataclass, field
from email.message import Message
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import lz4.frame

try:
    from backports import zstd
except ImportError:  # pragma: no cover - Python 3.14 has compression.zstd
    from compression import zstd  # type: ignore[no-redef]

READY = "clickhouse-http stand-in ready on"
DISPLAY_NAME = "flywheel-test-standin"

#: URL parameters that steer the HTTP interface and are not query settings.
_TRANSPORT = frozenset(
    """query database default_format session_id session_timeout session_check query_id
    quota_key wait_end_of_query compress decompress buffer_size role user password
    client_protocol_version enable_http_compression send_progress_in_http_headers
    cancel_http_readonly_queries_on_client_close""".split()
)
#: A statement whose data follows it: ``INSERT INTO t [(cols)] [SETTINGS ...] FORMAT f``.
_INSERT = re.compile(
    r"\s*INSERT\s+INTO\s+(?P<target>[^\n]+?)\s+(?P<settings>SETTINGS\s+[^\n]+?\s+)?"
    r"FORMAT\s+(?P<fmt>\w+)[ \t]*(?:\r?\n|$)",
    re.IGNORECASE,
)
_FORMAT = re.compile(r"\bFORMAT\s+(\w+)\s*;?\s*$", re.IGNORECASE)
_CODE = re.compile(r"Code: (\d+)\. DB::Exception: ")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_STATUS = {62: 400, 27: 400, 36: 400, 47: 400, 115: 400, 456: 400, 457: 400, 60: 404, 81: 404}
_CONTENT_TYPES = {
    "TabSeparated": "text/tab-separated-values; charset=UTF-8",
    "TSV": "text/tab-separated-values; charset=UTF-8",
    "JSON": "application/json; charset=UTF-8",
    "JSONEachRow": "application/x-ndjson; charset=UTF-8",
    "CSV": "text/csv; charset=UTF-8; header=absent",
}


class StandinError(Exception):
    """A ClickHouse-style error: its code and ``Code: N. DB::Exception: ...`` text."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Reply:
    """What one request answers, before compression."""

    body: bytes = b""
    fmt: str = "TabSeparated"
    summary: dict[str, str] = field(default_factory=dict)


class Engine:
    """One chDB session behind a lock; turns an HTTP request's parts into statements."""

    def __init__(self, path: str) -> None:
        from chdb import session as chdb_session

        os.makedirs(path, exist_ok=True)
        self._session = chdb_session.Session(path)
        self._lock = threading.Lock()
        self.inbox = tempfile.mkdtemp(prefix="ch-standin-inbox-")
        self._database = ""
        self._applied: dict[str, str] = {}
        version, tz = (
            self._session.query("SELECT version(), timezone()", "TSV").bytes().split(b"\t")
        )
        self.version = version.decode()
        self.timezone = tz.decode().strip()

    def close(self) -> None:
        with self._lock:
            shutil.rmtree(self.inbox, ignore_errors=True)
            self._session.close()

    def execute(
        self,
        text: bytes,
        database: str,
        settings: dict[str, str],
        params: dict[str, str],
        default_format: str,
    ) -> Reply:
        """Run one request's SQL (and the data after an ``INSERT ... FORMAT`` line)."""
        head = text[:65536].decode("latin-1")  # byte offsets survive latin-1
        insert = _INSERT.match(head)
        with self._lock:
            self._use(database or "default")
            self._apply(settings)
            if insert:
                return self._insert(insert, text[insert.end() :], params)
            sql = text.decode("utf-8")
            fmt_match = _FORMAT.search(sql)
            fmt = fmt_match.group(1) if fmt_match else default_format
            res = self._run(sql, fmt, params)
            if re.match(r"\s*USE\s", sql, re.IGNORECASE):
                self._database = ""  # the next request's database is set again
            return Reply(bytes(res.bytes() or b""), fmt, _summary(res))

    def _insert(self, m: re.Match[str], data: bytes, params: dict[str, str]) -> Reply:
        target = m.group("target").encode("latin-1").decode("utf-8")
        settings = (m.group("settings") or "").encode("latin-1").decode("utf-8")
        if not data:
            return Reply()
        path = os.path.join(self.inbox, uuid.uuid4().hex)
        with open(path, "wb") as f:
            f.write(data)
        try:
            sql = f"INSERT INTO {target} FROM INFILE '{path}' {settings}FORMAT {m.group('fmt')}"
            return Reply(b"", "TabSeparated", _summary(self._run(sql, "TabSeparated", params)))
        finally:
            os.unlink(path)

    def _use(self, database: str) -> None:
        if database != self._database:
            self._run(f"USE `{database.replace('`', '')}`", "TSV", {})
            self._database = database

    def _apply(self, settings: dict[str, str]) -> None:
        """Make the session's settings those of this request (one ``SET`` per change)."""
        for key in [k for k in self._applied if k not in settings]:
            self._run(f"SET {_name(key)} = DEFAULT", "TSV", {})
            del self._applied[key]
        for key, value in settings.items():
            if self._applied.get(key) != value:
                self._run(f"SET {_name(key)} = {_setting_literal(value)}", "TSV", {})
                self._applied[key] = value

    def _run(self, sql: str, fmt: str, params: dict[str, str]) -> Any:
        try:
            return (
                self._session.query(sql, fmt, params=params)
                if params
                else self._session.query(sql, fmt)
            )
        except Exception as exc:  # chDB raises ChdbError/RuntimeError with ClickHouse's text
            raise _as_standin_error(exc, self.version) from exc


def _name(key: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        raise StandinError(
            115, f"Code: 115. DB::Exception: Unknown setting '{key}'. (UNKNOWN_SETTING)"
        )
    return key


def _setting_literal(value: str) -> str:
    """A URL setting value as SQL: numbers and literals as they are, words quoted."""
    if _NUMBER.fullmatch(value) or value[:1] in ("[", "{", "'"):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _summary(res: Any) -> dict[str, str]:
    def num(name: str) -> int:
        try:
            return int(getattr(res, name)())
        except Exception:  # noqa: BLE001 - older chDB results lack some counters
            return 0

    return {
        "read_rows": str(num("rows_read")),
        "read_bytes": str(num("bytes_read")),
        "written_rows": str(num("rows_written")),
        "written_bytes": str(num("bytes_written")),
        "total_rows_to_read": str(num("rows_read")),
        "result_rows": "0",
        "result_bytes": "0",
        "elapsed_ns": str(int(float(getattr(res, "elapsed", lambda: 0)() or 0) * 1e9)),
    }


def _as_standin_error(exc: Exception, version: str) -> StandinError:
    text = str(exc).strip() or type(exc).__name__
    codes = _CODE.findall(text)
    if not codes:
        return StandinError(
            1001, f"Code: 1001. DB::Exception: {text}. (STD_EXCEPTION) (version {version})"
        )
    # chDB sometimes nests the same message: "Code: 115. DB::Exception: Code: 115. ..."
    head = _CODE.match(text)
    while head and _CODE.match(text, head.end()):
        text = text[head.end() :]
        head = _CODE.match(text)
    if "(version " not in text:
        text += f" (version {version})"
    return StandinError(int(codes[-1]), text)


# -- HTTP ---------------------------------------------------------------------


def _decompress(data: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if not data or encoding in ("", "identity"):
        return data
    if encoding == "lz4":  # clickhouse-connect sends one LZ4 frame per block
        out = []
        while data:
            dec = lz4.frame.LZ4FrameDecompressor()
            out.append(dec.decompress(data))
            data = dec.unused_data
        return b"".join(out)
    if encoding == "zstd":
        return zstd.decompress(data)
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "deflate":
        return zlib.decompress(data)
    raise StandinError(
        48, f"Code: 48. DB::Exception: Unknown Content-Encoding {encoding!r}. (NOT_IMPLEMENTED)"
    )


_COMPRESSORS = {
    "lz4": lambda b: lz4.frame.compress(b),
    "zstd": lambda b: zstd.compress(b),
    "gzip": lambda b: gzip.compress(b, compresslevel=1),
    "deflate": lambda b: zlib.compress(b, 1),
}


def _choose_encoding(accept: str) -> str | None:
    for token in accept.split(","):
        name = token.split(";")[0].strip().lower()
        if name in _COMPRESSORS:
            return name
    return None


class Handler(BaseHTTPRequestHandler):
    """ClickHouse's HTTP endpoints: ``/`` (queries), ``/ping``."""

    protocol_version = "HTTP/1.1"
    server_version = "ClickHouse-standin"
    engine: Engine  # set on the subclass made by make_server
    verbose = False

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.verbose:
            super().log_message(format, *args)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._handle()

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self._handle()

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline(65537).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline(65537)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        url = urlsplit(self.path)
        query_id = ""
        try:
            body = self._read_body()
            if url.path == "/ping":
                return self._send(200, b"Ok.\n", {"Content-Type": "text/html; charset=UTF-8"})
            if url.path not in ("/", ""):
                raise StandinError(
                    1001,
                    f"Code: 1001. DB::Exception: The stand-in has no endpoint {url.path}. "
                    "(STD_EXCEPTION)",
                )
            params = dict(parse_qsl(url.query, keep_blank_values=True))
            query_id = params.get("query_id") or str(uuid.uuid4())
            body = _decompress(body, self.headers.get("Content-Encoding", ""))
            ctype = self.headers.get("Content-Type", "")
            if ctype.startswith("multipart/form-data"):
                params.update(_form_fields(ctype, body))
                body = b""
            sql = params.get("query")
            if sql is None and not body:
                if self.command == "GET":
                    return self._send(200, b"Ok.\n", {"Content-Type": "text/html; charset=UTF-8"})
                raise StandinError(62, "Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)")
            text = body if sql is None else (sql.encode() + (b"\n" + body if body else b""))
            settings = {
                k: v
                for k, v in params.items()
                if k not in _TRANSPORT and not k.startswith(("param_", "http_"))
            }
            bound = {k[6:]: v for k, v in params.items() if k.startswith("param_")}
            reply = self.engine.execute(
                text,
                params.get("database", ""),
                settings,
                bound,
                params.get("default_format", "TabSeparated"),
            )
        except StandinError as err:
            return self._error(err, query_id)
        except Exception as exc:  # noqa: BLE001 - a stand-in bug still answers like ClickHouse
            return self._error(_as_standin_error(exc, self.engine.version), query_id)
        headers = {
            "Content-Type": _CONTENT_TYPES.get(reply.fmt, "application/octet-stream"),
            "X-ClickHouse-Query-Id": query_id,
            "X-ClickHouse-Format": reply.fmt,
            "X-ClickHouse-Timezone": self.engine.timezone,
            "X-ClickHouse-Summary": json.dumps(reply.summary),
        }
        data = reply.body
        encoding = _choose_encoding(self.headers.get("Accept-Encoding", ""))
        if encoding and data and params.get("enable_http_compression", "1") != "0":
            data = _COMPRESSORS[encoding](data)
            headers["Content-Encoding"] = encoding
        self._send(200, data, headers)

    def _error(self, err: StandinError, query_id: str) -> None:
        body = (str(err).rstrip() + "\n").encode()
        self._send(
            _STATUS.get(err.code, 500),
            body,
            {
                "Content-Type": "text/plain; charset=UTF-8",
                "X-ClickHouse-Exception-Code": str(err.code),
                "X-ClickHouse-Query-Id": query_id,
            },
        )

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        headers = {"X-ClickHouse-Server-Display-Name": DISPLAY_NAME, **headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def _form_fields(ctype: str, body: bytes) -> dict[str, str]:
    """The text fields of a multipart form (clickhouse-connect sends long binds this way)."""
    msg = BytesParser().parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    fields = {}
    parts: list[Message] = msg.get_payload() if msg.is_multipart() else []  # type: ignore[assignment]
    for part in parts:
        if part.get_filename():
            raise StandinError(
                48,
                "Code: 48. DB::Exception: External data is not supported by the stand-in. "
                "(NOT_IMPLEMENTED)",
            )
        name = part.get_param("name", header="content-disposition")
        if name:
            payload = part.get_payload(decode=True)
            fields[str(name)] = payload.decode("utf-8") if isinstance(payload, bytes) else ""
    return fields


def make_server(host: str, port: int, path: str, *, verbose: bool = False) -> ThreadingHTTPServer:
    """An HTTP server (not yet serving) over a chDB store in ``path``."""
    engine = Engine(path)
    handler = type("BoundHandler", (Handler,), {"engine": engine, "verbose": verbose})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    server.block_on_close = False  # idle keep-alive connections must not hold up exit
    return server


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description="Test stand-in: ClickHouse HTTP interface over chDB (not ClickHouse)."
    )
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8123, help="0 picks a free port")
    ap.add_argument("--path", required=True, help="chDB data directory")
    ap.add_argument("--verbose", action="store_true", help="log every request to stderr")
    ap.add_argument(
        "--exit-on-stdin-eof",
        action="store_true",
        help="stop when stdin closes (the test process that started it has gone)",
    )
    args = ap.parse_args(argv)
    server = make_server(args.host, args.port, args.path, verbose=args.verbose)
    inbox = server.RequestHandlerClass.engine.inbox  # type: ignore[attr-defined]
    if args.exit_on_stdin_eof:

        def watch() -> None:
            while os.read(0, 4096):  # the raw fd: a buffered reader would block shutdown
                pass
            shutil.rmtree(inbox, ignore_errors=True)
            os._exit(0)

        threading.Thread(target=watch, daemon=True).start()
    signal.signal(signal.SIGTERM, _interrupt)  # stop like Ctrl-C: close chDB cleanly
    host, port = str(server.server_address[0]), server.server_address[1]
    print(f"{READY} http://{host}:{port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.RequestHandlerClass.engine.close()  # type: ignore[attr-defined]
        sys.stdout.flush()
        os._exit(0)  # skip finalisation: handler threads may still hold sockets


if __name__ == "__main__":
    main()
