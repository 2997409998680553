"""deploy/: every file parses and agrees with the cluster topology and the settings."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from flywheel import Settings, create_app

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _env_is_a_setting(name: str) -> bool:
    assert name.startswith("FLYWHEEL_"), name
    parts = name[len("FLYWHEEL_"):].lower().split("__")
    model: type = Settings
    for p in parts:
        assert p in model.model_fields, f"{name} is not a setting"
        ann = model.model_fields[p].annotation
        model = ann if isinstance(ann, type) else model
    return True


def test_single_node_compose():
    doc = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    svc = doc["services"]
    assert {"clickhouse", "flywheel", "otel-collector"} <= set(svc)
    env = svc["flywheel"]["environment"]
    assert all(_env_is_a_setting(k) for k in env)
    assert env["FLYWHEEL_STORE"].startswith("clickhouse://") and "@clickhouse:8123/" in env["FLYWHEEL_STORE"]
    assert svc["otel-collector"]["profiles"] == ["collector"]
    col = yaml.safe_load((DEPLOY / "otel-collector.yaml").read_text())
    assert col["exporters"]["otlphttp/flywheel"]["endpoint"] == "http://flywheel:4318"
    assert col["service"]["pipelines"]["traces"]["exporters"] == ["otlphttp/flywheel"]


def test_cluster_topology_two_shards_two_replicas_with_keeper():
    root = ET.parse(DEPLOY / "clickhouse" / "cluster.xml").getroot()
    shards = root.findall("./remote_servers/flywheel/shard")
    assert len(shards) == 2
    hosts = []
    for shard in shards:
        assert shard.findtext("internal_replication") == "true"
        reps = shard.findall("replica")
        assert len(reps) == 2
        hosts += [r.findtext("host") for r in reps]
    keepers = [n.findtext("host") for n in root.findall("./zookeeper/node")]
    assert len(keepers) == 3
    assert "{shard}" in root.findtext("default_replica_path")
    compose = yaml.safe_load((DEPLOY / "compose.cluster.yaml").read_text())["services"]
    assert set(hosts) | set(keepers) <= set(compose)
    for i, shard in enumerate(shards, 1):
        for rep in shard.findall("replica"):
            host = rep.findtext("host")
            macros = ET.parse(DEPLOY / "clickhouse" / "macros" / f"{host}.xml").getroot()
            assert macros.findtext("./macros/shard") == str(i)
            assert macros.findtext("./macros/replica") == host
            mounts = " ".join(compose[host]["volumes"])
            assert f"macros/{host}.xml" in mounts and "cluster.xml" in mounts
    replicas = [ET.parse(DEPLOY / "clickhouse" / "macros" / f"{h}.xml").getroot()
                .findtext("./macros/replica") for h in hosts]
    assert len(set(replicas)) == len(hosts), "every-node tables need cluster-unique replica names"
    ids = set()
    for k in keepers:
        kc = ET.parse(DEPLOY / "clickhouse" / "keeper" / f"{k}.xml").getroot()
        ids.add(kc.findtext("./keeper_server/server_id"))
        raft = {s.findtext("hostname") for s in kc.findall("./keeper_server/raft_configuration/server")}
        assert raft == set(keepers)
    assert len(ids) == 3
    platform = [s for s in compose.values() if "FLYWHEEL_CLUSTER" in s.get("environment", {})]
    assert len(platform) == 2
    for s in platform:
        assert all(_env_is_a_setting(k) for k in s["environment"])
        assert s["environment"]["FLYWHEEL_CLUSTER"] == "flywheel"


def test_kubernetes_manifests(store):
    docs = list(yaml.safe_load_all((DEPLOY / "k8s" / "flywheel.yaml").read_text()))
    kinds = {d["kind"]: d for d in docs}
    assert {"Namespace", "Secret", "ConfigMap", "StatefulSet", "Service"} <= set(kinds)
    for key in list(kinds["ConfigMap"]["data"]) + list(kinds["Secret"]["stringData"]):
        assert _env_is_a_setting(key)
    pod = kinds["StatefulSet"]["spec"]["template"]["spec"]["containers"][0]
    paths = set(create_app(Settings(store="chdb:///unused"), store).openapi()["paths"])
    assert pod["readinessProbe"]["httpGet"]["path"] in paths
    assert pod["livenessProbe"]["httpGet"]["path"] in paths
    assert kinds["Service"]["spec"]["ports"][0]["port"] == 4318


def test_dockerfile_copies_every_package():
    from flywheel import PACKAGES

    text = (DEPLOY / "Dockerfile").read_text()
    for pkg in (*PACKAGES, "tui"):
        assert f"COPY {pkg} ./{pkg}" in text


def test_every_deployment_requires_auth_and_documents_the_first_key():
    """Secure by default: auth=required everywhere the platform binds 0.0.0.0, and a bootstrap."""
    docker = (DEPLOY / "Dockerfile").read_text()
    assert "FLYWHEEL_AUTH=required" in docker and "FLYWHEEL_INGEST__HOST=0.0.0.0" in docker
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    cluster = yaml.safe_load((DEPLOY / "compose.cluster.yaml").read_text())["services"]
    platform = [compose["flywheel"]] + [s for s in cluster.values()
                                        if "FLYWHEEL_CLUSTER" in s.get("environment", {})]
    assert all(s["environment"]["FLYWHEEL_AUTH"] == "required" for s in platform)
    docs = list(yaml.safe_load_all((DEPLOY / "k8s" / "flywheel.yaml").read_text()))
    kinds = {d["kind"]: d for d in docs}
    assert kinds["ConfigMap"]["data"]["FLYWHEEL_AUTH"] == "required"
    pod = kinds["StatefulSet"]["spec"]["template"]["spec"]["containers"][0]
    token = [e for e in pod["envFrom"] if e.get("secretRef", {}).get("name") == "flywheel-admin-token"]
    assert token and token[0]["secretRef"]["optional"] is True
    assert "FLYWHEEL_ADMIN_TOKEN" not in json.dumps(docs)  # no token value is shipped
    for f in ("Dockerfile", "compose.yaml", "compose.cluster.yaml", "k8s/flywheel.yaml"):
        text = (DEPLOY / f).read_text()
        assert "keys create --project default --scope admin" in text or "FLYWHEEL_ADMIN_TOKEN" in text, f
    col = yaml.safe_load((DEPLOY / "otel-collector.yaml").read_text())
    assert "FLYWHEEL_INGEST_KEY" in col["exporters"]["otlphttp/flywheel"]["headers"]["authorization"]
