"""Scale-out on a real broker: config + gateway in one process, two ping processes, every flow CLI."""

from __future__ import annotations

import json

import pytest

from support.names import unique
from support.procs import free_port, spawn, stop, tg, wait_until

pytestmark = [pytest.mark.rabbitmq, pytest.mark.timeout(180)]


def test_flow_cli_and_competing_processor_processes(rabbitmq_url, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    flow_id = unique("scale")
    bus = ["--pubsub", "rabbitmq", "--pubsub-url", rabbitmq_url]
    launcher = spawn("tg-launch", *bus, "--processors", "config,gateway", "--flow", "",
                     "--data-dir", str(tmp_path), "--gateway-port", str(port))
    workers = [spawn("tg-processor", "ping", *bus) for _ in range(2)]
    try:
        wait_until(lambda: tg("tg-show-flows", "-u", url).returncode == 0, what="gateway")

        shown = tg("tg-show-flow-blueprints", "-u", url)
        assert shown.returncode == 0 and "default" in shown.stdout and "ping" in shown.stdout

        started = tg("tg-start-flow", "-u", url, "-n", "default", "-i", flow_id, "-d", "scale test")
        assert started.returncode == 0, started.stderr
        flows = tg("tg-show-flows", "-u", url)
        assert flow_id in flows.stdout and "scale test" in flows.stdout

        config = json.loads(tg("tg-show-config", "-u", url, "-t", "flow").stdout)
        assert config["config"]["flow"][flow_id]["blueprint-name"] == "default"

        from urllib.request import Request, urlopen

        def ping(seq: int) -> dict:
            body = json.dumps({"text": "hi", "seq": seq}).encode()
            req = Request(f"{url}api/v1/flow/{flow_id}/service/ping", body, {"Content-Type": "application/json"})
            return json.loads(urlopen(req, timeout=10).read())

        wait_until(lambda: "error" not in ping(0), what="ping processors to join the flow")
        instances = {ping(i)["text"].split(":")[0] for i in range(60)}
        assert len(instances) == 2, f"both ping processes should answer, got {instances}"

        again = tg("tg-start-flow", "-u", url, "-n", "default", "-i", flow_id)
        assert again.returncode == 1 and "already running" in again.stderr

        assert tg("tg-stop-flow", "-u", url, "-i", flow_id).returncode == 0
        assert flow_id not in tg("tg-show-flows", "-u", url).stdout
    finally:
        for worker in workers:
            stop(worker)
        log = stop(launcher)
    assert "Traceback" not in log, log


def test_cli_reports_unreachable_gateway_in_one_line():
    result = tg("tg-show-flows", "-u", f"http://127.0.0.1:{free_port()}/")
    assert result.returncode == 1
    assert result.stderr.startswith("tg-show-flows: error: cannot reach the gateway")
    assert len(result.stderr.strip().splitlines()) == 1


def test_tg_processor_refuses_the_inproc_bus():
    result = tg("tg-processor", "ping")
    assert result.returncode == 2 and "needs a broker" in result.stderr  # a usage error, as argparse's
