"""The files in deploy/ stay true to what the code reads and to the tested HAProxy policy.

No Docker or Kubernetes here: the image is not built and the manifests are not applied.
What is checked is what can drift silently: the ConfigMap's config and lock file load with
mcpmount's own readers, the image, the ConfigMap and the Deployment agree on paths and
probes, and deploy/haproxy.cfg is valid and carries the retry policy that
tests/replicas/test_replicas.py runs against real replicas.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Final

import pytest

from mcpmount.catalog import Pins
from mcpmount.cli._app import _parser  # pyright: ignore[reportPrivateUsage]
from mcpmount.config import load_config
from replicas.haproxy_support import HAPROXY, haproxy_config

pytestmark = pytest.mark.usefixtures("no_leaks")

DEPLOY: Final = Path(__file__).resolve().parents[2] / "deploy"
K8S: Final = DEPLOY / "k8s"


def block(yaml_text: str, key: str) -> str:
    """The text of a literal block scalar ``key: |`` (YAML), without its indentation."""
    lines = yaml_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f"{key}: |")
    indent = len(lines[start]) - len(lines[start].lstrip()) + 2
    body: list[str] = []
    for line in lines[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        body.append(line[indent:])
    return "\n".join(body).strip() + "\n"


def test_the_configmap_holds_a_config_and_a_lock_file_mcpmount_reads(tmp_path: Path) -> None:
    """Its mcpmount.toml loads (secrets from the environment) and its lock file is valid."""
    configmap = (K8S / "configmap.yaml").read_text()
    config = tmp_path / "mcpmount.toml"
    config.write_text(block(configmap, "mcpmount.toml"))
    (tmp_path / "mcpmount.lock").write_text(block(configmap, "mcpmount.lock"))
    loaded = load_config(config, environ={"TRACKER_TOKEN": "t" * 20, "SEARCH_TOKEN": "s" * 20})
    assert set(loaded.servers) == {"tracker", "search"}
    assert Pins.read(tmp_path / "mcpmount.lock") is not None


def test_the_image_the_configmap_and_the_deployment_agree() -> None:
    """The image serves /config/mcpmount.toml, the ConfigMap has it, the Deployment mounts it
    there, and its probes and the image's healthcheck use the endpoints serve answers."""
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    deployment = (K8S / "deployment.yaml").read_text()
    assert '"serve", "/config/mcpmount.toml"' in dockerfile
    assert "http://127.0.0.1:8000/healthz" in dockerfile
    assert "USER 10001" in dockerfile
    for key in ("mcpmount.toml: |", "mcpmount.lock: |"):
        assert key in (K8S / "configmap.yaml").read_text()
    assert "mountPath: /config" in deployment
    assert "name: mcpmount-config" in deployment
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        after = deployment.split(f"{probe}:", 1)[1]
        assert after.split("path:", 1)[1].split()[0] == path
    assert "runAsUser: 10001" in deployment
    assert "replicas: 3" in deployment
    assert "\t" not in deployment


def test_deploy_haproxy_cfg_is_valid_and_carries_the_tested_retry_policy(tmp_path: Path) -> None:
    """haproxy -c accepts it, and every retry rule of the tested config is in it verbatim."""
    assert HAPROXY is not None, "haproxy is not installed: `apt-get install haproxy`"
    shipped = (DEPLOY / "haproxy.cfg").read_text()
    checked = subprocess.run(
        [HAPROXY, "-c", "-f", str(DEPLOY / "haproxy.cfg")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = haproxy_config(
        port=1,
        replicas=[2],
        stats_socket=tmp_path / "s.sock",
        idempotent_tools=["search__web_search"],
        health_path="/readyz",
    )
    rules = [
        line
        for line in tested.splitlines()
        if line.strip().startswith(("option", "retr", "acl", "http-request", "http-check"))
    ]
    assert len(rules) == 9
    missing = [rule for rule in rules if rule not in shipped.splitlines()]
    assert missing == []


def test_the_image_and_the_deployment_pass_flags_serve_takes() -> None:
    """The Dockerfile's CMD and the Deployment's args (with the commented --shared-state
    line too) are flags `mcpmount serve` parses: a renamed flag breaks this, not a pod."""
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    cmd_line = next(line for line in dockerfile.splitlines() if line.startswith("CMD "))
    image_args: list[str] = json.loads(cmd_line.removeprefix("CMD "))
    deployment = (K8S / "deployment.yaml").read_text()
    args_block = deployment.split("args:", 1)[1].split("envFrom:", 1)[0]
    pod_args = [
        line.strip().lstrip("#").strip().removeprefix("- ").split("  #")[0].strip()
        for line in args_block.splitlines()
        if line.strip().lstrip("#").strip().startswith("- --")
    ]
    assert "--shared-state=redis://mcpmount-redis:6379/0" in pod_args
    parser = _parser()
    for args in (image_args, pod_args):
        parsed = parser.parse_args(["serve", "/config/mcpmount.toml", *args])
        assert (parsed.transport, parsed.host, parsed.stateless) == ("http", "0.0.0.0", True)
