"""Send GenAI-convention spans from a plain OpenTelemetry SDK program.

Run ``flywheel serve`` first, then ``python examples/otel_quickstart.py``;
then ``flywheel traces list``.
"""

import json

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "quickstart-agent"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint="http://127.0.0.1:4318/v1/traces")))
tracer = provider.get_tracer("quickstart")

with tracer.start_as_current_span("invoke_agent banker", attributes={"gen_ai.operation.name": "invoke_agent"}):
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

provider.shutdown()
print("sent; try: flywheel traces list")
