"""The wheel as pip builds it: every data file the code reads at run time ships, and setuptools has
nothing to warn about (a data folder taken for an undeclared package is one such warning)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ["flow/gateway/static/viewer.html", "flow/gateway/static/viewer.js", "flow/gateway/static/viewer.css",
        "launch/blueprints/default.json", "launch/tools/default.json", "launch/superseded-blueprints.json",
        "launch/functional-predicates.json",
        "launch/corpus/helios-grid.md", "specs/ontology/tracegraph.ttl", "specs/ontology/shapes.ttl"]


@pytest.mark.timeout(600)
def test_the_wheel_ships_the_data_files_without_setuptools_warnings(tmp_path):
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    assert "absent from the `packages` configuration" not in build.stdout + build.stderr
    [wheel] = tmp_path.glob("tracegraph-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"tracegraph/{path}" for path in DATA} <= names
