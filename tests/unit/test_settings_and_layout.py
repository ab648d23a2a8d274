"""Settings precedence (flag > TG_* env > default), and the package layout pyproject declares."""

import argparse
import tomllib
from pathlib import Path

from tracegraph.base.settings import RuntimeSettings, add_runtime_arguments, settings_from

ROOT = Path(__file__).resolve().parents[2]


def parse(argv):
    p = argparse.ArgumentParser()
    add_runtime_arguments(p)
    return settings_from(p.parse_args(argv))


def test_flag_beats_environment_beats_default(monkeypatch):
    assert parse([]).pubsub == "inproc"
    monkeypatch.setenv("TG_PUBSUB", "rabbitmq")
    monkeypatch.setenv("TG_MAX_ATTEMPTS", "9")
    assert parse([]).pubsub == "rabbitmq"
    assert parse(["--pubsub", "pulsar"]).pubsub == "pulsar"
    assert parse([]).max_attempts == 9


def test_secret_is_not_printed(monkeypatch):
    monkeypatch.setenv("TG_GATEWAY_SECRET", "hunter2")
    settings = RuntimeSettings()
    assert "hunter2" not in repr(settings) and settings.gateway_secret.get_secret_value() == "hunter2"


def test_every_package_folder_is_declared_in_pyproject():
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"tracegraph"}
    for init in ROOT.glob("*/**/__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if rel.parts[0] in {"tests", "bench", "build", "venv"} or rel.parts[0].startswith(".") or "egg-info" in str(rel):
            continue
        found.add("tracegraph." + ".".join(rel.parts))
    assert declared == found
