"""A bad flag or TG_* value is one `prog: error: …` line and exit status 2, never a traceback,
in every command that builds the runtime settings (and in the client commands)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tracegraph.base.errors import ConfigError
from tracegraph.base.settings import add_runtime_arguments, settings_from
from tracegraph.base.usage import ArgumentParser

SCRIPTS = Path(sys.executable).parent  # the console scripts, installed beside the interpreter


def run(command: str, *argv: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TG_")}
    return subprocess.run([str(SCRIPTS / command), *argv], capture_output=True, text=True, timeout=120,
                          env={**clean, **env})


@pytest.mark.parametrize("command, argv, env, shown", [
    ("tg-launch", ["--gateway-port", "99999"], {}, "tg-launch: error: --gateway-port: must be at most 65535"),
    ("tg-demo", ["--gateway-port", "99999"], {}, "tg-demo: error: --gateway-port: must be at most 65535"),
    ("tg-processor", ["ping", "--pubsub", "rabbitmq", "--max-attempts", "0"], {},
     "tg-processor: error: --max-attempts: must be at least 1"),
    ("tg-launch", [], {"TG_GATEWAY_PORT": "eighty"},
     "tg-launch: error: TG_GATEWAY_PORT (environment): must be a whole number"),
    ("tg-launch", ["--gateway-port", "eighty"], {}, "tg-launch: error: argument --gateway-port: invalid int value"),
    ("tg-launch", ["--processors", "config,nope"], {}, "tg-launch: error: --processors: unknown 'nope'"),
    ("tg-processor", ["ping"], {}, "tg-processor: error: --pubsub: tg-processor needs a broker"),
    ("tg-processor", ["no-such-processor", "--pubsub", "rabbitmq"], {}, "tg-processor: error: argument NAME"),
    ("tg-show-flows", ["--no-such-flag"], {}, "tg-show-flows: error: unrecognized arguments: --no-such-flag"),
])
def test_a_bad_value_is_one_line_and_exit_status_2(command, argv, env, shown):
    done = run(command, *argv, **env)
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(shown), done.stderr
    assert done.returncode == 2 and done.stdout == ""


def test_every_refused_setting_is_named_as_the_user_gave_it(monkeypatch, capsys):
    monkeypatch.setenv("TG_TRIPLES_ENGINE", "sqlite")
    parser = ArgumentParser(prog="tg-x")
    add_runtime_arguments(parser)
    with pytest.raises(SystemExit) as exit:
        settings_from(parser.parse_args(["--request-timeout", "0"]), parser)
    assert exit.value.code == 2
    assert capsys.readouterr().err == ("tg-x: error: --request-timeout: must be greater than 0; "
                                       "TG_TRIPLES_ENGINE (environment): must be 'oxigraph' or 'cassandra'\n")


def test_without_a_parser_a_refused_setting_is_a_config_error():
    parser = ArgumentParser(prog="tg-x")
    add_runtime_arguments(parser)
    with pytest.raises(ConfigError, match=r"^--max-attempts: must be at least 1$"):
        settings_from(parser.parse_args(["--max-attempts", "0"]))
