"""A gateway port that is taken: `tg-launch` and `tg-demo` say so in one line, before starting anything,
and exit 1; a gateway that meets it when binding says the same."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.errors import ConfigError
from tracegraph.launch.stack import Stack

from support.procs import tg
from support.stack import config_factory, settings_for


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize("command", ["tg-launch", "tg-demo"])
def test_a_taken_port_is_one_line_before_anything_starts(command, taken_port, tmp_path):
    data = tmp_path / "data"
    result = tg(command, "--gateway-port", str(taken_port), "--data-dir", str(data), timeout=120)
    assert result.returncode == 1, result.stderr
    assert result.stderr == f"{command}: error: port {taken_port} is in use; choose another with --gateway-port\n"
    assert not data.exists(), "no processor may start (and open its stores) on a port that cannot be served"


async def test_a_gateway_that_cannot_bind_its_port_says_which(taken_port, tmp_path):
    backend = InprocBackend()
    try:
        with pytest.raises(ConfigError, match=f"^port {taken_port} is in use; choose another with --gateway-port$"):
            async with Stack(backend, settings_for(tmp_path, gateway_port=taken_port),
                             [config_factory(), "gateway"]):
                pass
    finally:
        await backend.aclose()
