"""The README's main job, run as a user runs it: `tg-demo` on the embedded defaults."""

from __future__ import annotations

import re
from pathlib import Path

from support.procs import tg

README = Path(__file__).resolve().parents[2] / "README.md"


def test_main_job_runs_on_embedded_defaults(tmp_path):
    result = tg("tg-demo", "--data-dir", str(tmp_path / "data"), "--pings", "20", timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "TraceGraph stack up: config, gateway, ping on the inproc bus" in out
    assert "started flow 'demo' from blueprint 'default'" in out
    assert re.search(r"ping through gateway -> bus -> ping processor: 'demo/[0-9a-f]{8}: hello'", out)
    assert "flows still running: none" in out
    assert (tmp_path / "data" / "config.sqlite").exists()


def test_readme_names_the_commands_ci_runs():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    test_command = re.search(r"^TEST_COMMAND=\"(.+)\"$", ci, re.M).group(1)
    assert test_command in text, "README must show exactly the test command .ci/run runs"
    assert "tg-demo" in text
