"""Send GenAI-convention spans from a plain OpenTelemetry SDK program.

Run ``flywheel serve`` first, then ``python examples/otel_quickstart.py``: it
waits until the platform answers, sends one agent run (an ``invoke_agent``
span with a ``chat`` and an ``execute_tool`` span under it), waits until the
trace is stored and prints its trace id (so ``TRACE_ID=$(python
examples/otel_quickstart.py)`` works in a shell). The platform's address is
``OTEL_EXPORTER_OTLP_ENDPOINT`` (the OpenTelemetry variable), default
``http://127.0.0.1:4318``.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

ENDPOINT = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318").rstrip("/")


def wait_for(url: str, what: str, seconds: float = 60.0) -> None:
    """Poll ``url`` until it answers; exit 1 naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):  # keys exist and this program holds none to read with
                return
        except OSError:
            pass  # not listening yet, or not stored yet (404)
        time.sleep(0.25)
    sys.exit(f"{what} did not answer at {url} within {seconds:.0f} s "
             "(is `flywheel serve` running?)")


wait_for(f"{ENDPOINT}/readyz", "the platform")
provider = TracerProvider(resource=Resource.create({"service.name": "quickstart-agent"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{ENDPOINT}/v1/traces")))
tracer = provider.get_tracer("quickstart")

with tracer.start_as_current_span("invoke_agent banker", attributes={"gen_ai.operation.name": "invoke_agent"}) as root:
    trace_id = f"{root.get_span_context().trace_id:032x}"
    with tracer.start_as_current_span("chat", attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "my-model",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Pay the March rent"}]}]),
        "gen_ai.usage.input_tokens": 42, "gen_ai.usage.output_tokens": 7,
    }):
        pass
    with tracer.start_as_current_span("execute_tool send_money", attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "send_money",
        "gen_ai.tool.call.arguments": json.dumps({"recipient": "GB29NWBK60161331926819", "amount": 1100}),
        "gen_ai.tool.call.result": json.dumps({"status": "ok"}),
    }):
        pass

provider.shutdown()  # sends what is left
wait_for(f"{ENDPOINT}/api/traces/{trace_id}?attributes=false&limit=1", "the stored trace")
print(trace_id)
