"""servers/ (the Pulsar and Cassandra launchers) and tests/support/servers.py, without starting a JVM."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support import servers as support

sys.path.insert(0, str(support.SERVERS))  # servers/ is a folder of scripts, not a package
import cassandra_node  # noqa: E402
import servers_cli as cli  # noqa: E402
import jvm_process  # noqa: E402
import pulsar_node  # noqa: E402


def yaml_value(text: str, key: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith(f"{key}:"))


def test_cassandra_keeps_everything_under_its_data_folder(tmp_path: Path) -> None:
    text = cassandra_node.cassandra_yaml(tmp_path)
    for key in ("commitlog_directory", "saved_caches_directory", "hints_directory", "cdc_raw_directory"):
        assert yaml_value(text, key).startswith(str(tmp_path))
    assert f"  - {tmp_path / 'data'}" in text
    assert yaml_value(text, "listen_address") == "127.0.0.1"
    assert yaml_value(text, "native_transport_port") == "9042"


def test_cassandra_jvm_gets_java17_module_access_and_its_config(tmp_path: Path) -> None:
    server = cassandra_node.cassandra_server(tmp_path, heap_mb=300)
    options = server.jvm_options
    assert "-Xmx300m" in options
    assert options[options.index("--add-opens") + 1].endswith("=ALL-UNNAMED")
    assert "java.base/sun.nio.ch=ALL-UNNAMED" in options
    assert f"-Dcassandra.config=file://{tmp_path / 'cassandra.yaml'}" in options
    assert (tmp_path / "cassandra.yaml").exists() and (tmp_path / "logback.xml").exists()
    assert server.main_class == "org.apache.cassandra.service.CassandraDaemon"


def test_pulsar_standalone_runs_on_loopback_with_one_copy_of_each_entry(tmp_path: Path) -> None:
    server = pulsar_node.pulsar_server(tmp_path, web_port=18080, broker_port=16650)
    conf = dict(line.split("=", 1) for line in (tmp_path / "standalone.conf").read_text().splitlines()
                if "=" in line and not line.startswith("#"))
    assert conf["bindAddress"] == "127.0.0.1" and conf["brokerServicePort"] == "16650"
    assert conf["webServicePort"] == "18080"
    assert conf["managedLedgerDefaultEnsembleSize"] == conf["managedLedgerDefaultAckQuorum"] == "1"
    assert "--no-functions-worker" in server.arguments
    assert server.arguments[server.arguments.index("--metadata-dir") + 1] == str(tmp_path / "metadata")


def test_pulsar_is_not_ready_while_nothing_listens() -> None:
    assert not pulsar_node.broker_ready(web_port=1, broker_port=1)


def test_a_stopped_or_unknown_server_has_no_running_pid(tmp_path: Path) -> None:
    assert jvm_process.running_pid(tmp_path) is None
    jvm_process.pid_file(tmp_path).write_text("not a pid")
    assert jvm_process.running_pid(tmp_path) is None
    assert jvm_process.stop(tmp_path) is False


def test_the_classpath_is_resolved_again_only_when_the_pom_changed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(jvm_process, "SERVERS", tmp_path)
    (tmp_path / "demo" / "target").mkdir(parents=True)
    (tmp_path / "demo" / "pom.xml").write_text("<project/>")
    server = jvm_process.JvmServer("demo", "Main", [])
    server.classpath_file.write_text("/a.jar:/b.jar\n")
    calls: list[list[str]] = []
    monkeypatch.setattr(jvm_process.subprocess, "run", lambda command, **_: calls.append(command))
    assert jvm_process.resolve_classpath(server) == "/a.jar:/b.jar"
    assert calls == []


def test_several_servers_get_a_data_subfolder_each(tmp_path: Path, monkeypatch) -> None:
    seen: dict[str, Path] = {}
    monkeypatch.setattr(cli, "stop", lambda data: seen.setdefault(data.name, data) and False)
    assert cli.main(["stop", "pulsar", "cassandra", "--data", str(tmp_path)]) == 0
    assert seen == {"pulsar": tmp_path / "pulsar", "cassandra": tmp_path / "cassandra"}


def test_addresses_are_read_from_the_test_variables() -> None:
    assert support.pulsar_address("pulsar://broker.example:6651") == ("broker.example", 6651)
    assert support.cassandra_address("10.0.0.5:9043, 10.0.0.6") == ("10.0.0.5", 9043)
    assert support.cassandra_address("node1") == ("node1", 9042)


@pytest.mark.parametrize("name,variable", [("pulsar", "TG_PULSAR_URL"), ("cassandra", "TG_CASSANDRA_HOSTS")])
def test_a_suite_nobody_asked_for_is_skipped_with_the_variable_named(name: str, variable: str) -> None:
    assert support.Wanted(name, "", 0, startable=False, required=False).skip_reason == f"{variable} not set"
    assert support.Wanted(name, "127.0.0.1", 9, startable=True, required=False).skip_reason is None


def test_an_unreachable_server_that_may_not_be_started_gives_a_reason() -> None:
    wanted = support.Wanted("pulsar", "127.0.0.1", 1, startable=False, required=False)
    reason = support.availability(wanted)
    assert reason is not None and "127.0.0.1:1" in reason


def test_a_missing_start_script_is_reported(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(support, "SERVERS", tmp_path)
    assert "start" in (support.can_start() or "")


def test_the_run_ends_by_naming_the_servers_it_started(monkeypatch) -> None:
    class Terminal:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def section(self, title: str) -> None:
            self.lines.append(f"== {title}")

        def write_line(self, line: str) -> None:
            self.lines.append(line)

    terminal = Terminal()
    support.write_started_summary(terminal)
    assert terminal.lines == []
    monkeypatch.setattr(support, "STARTED", ["pulsar: ready at pulsar://127.0.0.1:6650 in 24.5 s, RSS 383 MB"])
    support.write_started_summary(terminal)
    assert terminal.lines[-1].startswith("pulsar: ready at") and len(terminal.lines) == 2
