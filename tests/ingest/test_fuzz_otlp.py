"""Fuzzing the OTLP endpoint in-process: any body gets 200 or a 4xx, never a 5xx.

The default run is a few hundred generated bodies; ``bench/fuzz_otlp.py``
runs the same generators for 100,000 bodies against a live server. The app
starts once (its lifespan: log, writer, decode path) and every generated body
goes to that one running app, as bodies reach a live server.
"""

from __future__ import annotations

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flywheel import Settings, create_app
from tests._auth import LOCAL
from tests._budget import examples
from tests.ingest.otlp_strategies import otlp_bodies


def test_fuzzed_bodies_never_5xx(store, tmp_path):
    app = create_app(Settings(store="chdb:///unused", ingest={"wal_dir": tmp_path / "wal"}), store)
    statuses: list[int] = []

    with TestClient(app, base_url=LOCAL, client=("127.0.0.1", 50000)) as client:

        @settings(max_examples=examples(300), deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.lists(otlp_bodies(), min_size=1, max_size=5))
        def check(bodies):
            for ctype, encoding, body in bodies:
                headers = {"content-type": ctype}
                if encoding:
                    headers["content-encoding"] = encoding
                r = client.post("/v1/traces", content=body, headers=headers)
                statuses.append(r.status_code)
                assert r.status_code < 500, (r.status_code, r.text, body[:200])

        check()
    assert any(s == 200 for s in statuses) and any(400 <= s < 500 for s in statuses)
