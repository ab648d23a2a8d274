"""The scale benchmark's figures (bench/ingest_scale.py) from a hand-made run, without a stack."""

import importlib.util
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"
_SAVED_PATH = list(sys.path)  # the bench puts its folder first to import its siblings; undone below
_SPEC = importlib.util.spec_from_file_location("ingest_scale", _BENCH / "ingest_scale.py")
bench = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("ingest_scale", bench)  # dataclasses look their module up there
_SPEC.loader.exec_module(bench)
sys.path[:] = _SAVED_PATH


def _sample(at: float, extracted: int, chunks: int = 100) -> "bench.Sample":
    return bench.Sample(at=at, submitted=10, documents=10, chunks=chunks, extracted=extracted, rss_mb=500.0,
                        disk_mb=1.0)


def test_crossing_interpolates_between_looks():
    samples = [_sample(0, 0), _sample(10, 40), _sample(20, 100)]
    assert bench.crossing(samples, 20) == pytest.approx(5.0)
    assert bench.crossing(samples, 70) == pytest.approx(15.0)
    assert bench.crossing(samples, 100) == pytest.approx(20.0)
    assert bench.crossing(samples, 101) is None
    assert bench.crossing([], 10) is None


def test_logged_errors_are_counted_by_message(tmp_path):
    log = tmp_path / "stack.log"
    log.write_text("t WARNING a: fine\nt ERROR x: failed\nTraceback…\nt ERROR x: failed\nt ERROR y: other\n")
    assert bench.logged_errors(log) == {"x: failed": 2, "y: other": 1}
    assert bench.logged_errors(tmp_path / "missing.log") == {}


def test_report_prints_rates_questions_and_ten_curve_rows(tmp_path, capsys):
    passages = [bench.scale_corpus.Passage("stdlib", f"m.f{i}", f"f{i}", "text") for i in range(10)]
    run = bench.Run(passages)
    run.submit_times = [float(i + 1) for i in range(10)]
    run.samples = [_sample(0, 0), _sample(10, 50), _sample(20, 100)]
    run.marks = {"submitted": 10.0, "extracted": 20.0, "indexed": 21.0}
    run.asked = [bench.Asked(5.0, "loading", "graph-rag", 1.5, None),
                 bench.Asked(6.0, "loading", "search", 60.0, "TimeoutError")]
    (tmp_path / "data.bin").write_bytes(b"x" * 4096)
    bench.report(run, tmp_path)
    shown = capsys.readouterr().out
    assert "passages: 10 (stdlib 10)" in shown
    assert "settled                  not reached" in shown
    assert "request timeouts: 1" in shown
    curve = shown.split("curve", 1)[1].splitlines()[2:]
    assert [row.split()[0] for row in curve] == [f"{10 * k}%" for k in range(1, 11)]


def test_a_structure_is_current_only_when_updated_covering_and_said_current():
    assert bench.is_current({"updated": "2026-01-01T00:00:00Z"})  # a processor that says no more
    assert not bench.is_current({})
    assert not bench.is_current({"updated": "t", "state": "behind"})
    assert not bench.is_current({"updated": "t", "state": "current",
                                 "coverage": {"passages-covered": 9, "passages-total": 10}})
    assert bench.is_current({"updated": "t", "state": "current",
                             "coverage": {"entities-covered": 10, "entities-total": 10}})
