"""The server process stays light: serving spans and trace reads loads no heavy library.

``flywheel serve`` holds chDB (about 230 MB of its shared library is
resident once imported); Presidio, spaCy, datasketch, scipy, matplotlib,
Textual, AgentDojo and the redactor's tables (wordfreq, python-stdnum) belong to the commands and workers that use them.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["presidio_analyzer", "presidio_anonymizer", "spacy", "datasketch", "scipy",
         "matplotlib", "textual", "agentdojo",
         # the redactor's tables: imported on the first redacted response, not at start
         "wordfreq", "stdnum", "flywheel.promote._redact"]

_SERVE = """
import json, sys, tempfile
from fastapi.testclient import TestClient
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from flywheel import Settings, open_store
from flywheel._app import create_app

req = ExportTraceServiceRequest()
span = req.resource_spans.add().scope_spans.add().spans.add()
span.trace_id, span.span_id, span.name = b"\\x01" * 16, b"\\x02" * 8, "chat"
span.start_time_unix_nano, span.end_time_unix_nano = 1_764_000_000_000_000_000, 1_764_000_001_000_000_000
attr = span.attributes.add()
attr.key, attr.value.string_value = "gen_ai.operation.name", "chat"
d = tempfile.mkdtemp()
settings = Settings(store=f"chdb://{d}/s", auth="off").for_serving()  # as `flywheel serve`
settings.ingest.decode_workers = 1  # a decode worker too (serve's choice without the compiled decoder)
store = open_store(settings.store)
store.migrate()
with TestClient(create_app(settings, store)) as client:
    r = client.post("/v1/traces", content=req.SerializeToString(),
                    headers={"content-type": "application/x-protobuf"})
    assert r.status_code == 200, r.text
    assert client.app.state.writer.flush(30)
    listed = client.get("/api/traces").json()
    assert [t["trace_id"] for t in listed["traces"]] == ["01" * 16], listed
    assert client.get("/api/traces/" + "01" * 16).status_code == 200
    worker = client.app.state.decode_pool._pool.submit(eval, "sorted(__import__('sys').modules)")
    in_worker = set(worker.result(timeout=60))
print(json.dumps(sorted(m for m in HEAVY if m in sys.modules or m in in_worker)))
"""


def test_serving_and_reading_traces_import_no_heavy_library() -> None:
    """In the server process and in its decode worker."""
    code = f"HEAVY = {HEAVY!r}\n" + _SERVE
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
