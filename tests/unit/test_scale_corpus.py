"""The scale benchmark's corpus (bench/scale_corpus.py): deterministic, de-duplicated, every passage
labelled with its source, and large enough on this machine."""

import gzip
import importlib.util
import json
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "bench" / "scale_corpus.py"
_SPEC = importlib.util.spec_from_file_location("scale_corpus", _PATH)
corpus = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("scale_corpus", corpus)  # dataclasses look their module up there
_SPEC.loader.exec_module(corpus)

LONG = "x" * 130


def _texts(passages) -> list[str]:
    return [" ".join(p.text.split()) for p in passages]


def test_the_same_count_gives_the_same_passages_without_repeats():
    first, second = corpus.build(2000), corpus.build(2000)
    assert len(first) == 2000
    assert first == second
    assert len(set(_texts(first))) == len(first)


def test_a_modest_count_mixes_every_source_and_labels_it():
    built = corpus.build(600)
    beside = {"multihop"} if corpus.MULTIHOP.is_dir() else set()  # the public samples sit beside the repo
    assert set(corpus.counts(built)) == {"stdlib", "debian"} | beside
    assert all(p.title and p.subject and len(p.text) >= corpus.MIN_CHARS for p in built)


def test_repeats_across_and_within_sources_are_dropped_and_sources_taken_in_turn():
    a = [corpus.Passage("a", "a1", "a1", "same " + LONG), corpus.Passage("a", "a2", "a2", "only a " + LONG)]
    b = [corpus.Passage("b", "b1", "b1", "same  " + LONG), corpus.Passage("b", "b2", "b2", "only b " + LONG)]
    built = corpus.build(10, [iter(a), iter(b)])
    assert [p.title for p in built] == ["a1", "b2", "a2"]


def test_build_stops_at_the_count_asked():
    many = (corpus.Passage("a", str(i), str(i), f"{i} {LONG}") for i in range(100))
    assert len(corpus.build(7, [many])) == 7


def test_debian_paragraphs_are_read_plain_and_gzipped(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "README").write_text(f"first {LONG}\n\nshort\n\nthird {LONG}\n")
    (package / "changelog.Debian.gz").write_bytes(gzip.compress(f"entry {LONG}".encode()))
    (package / "logo.png").write_bytes(b"\x89PNG")
    found = list(corpus.debian_passages(tmp_path))
    assert [p.title for p in found] == ["pkg README §1", "pkg README §3", "pkg changelog.Debian.gz §1"]
    assert {p.source for p in found} == {"debian"} and found[0].subject == "pkg"


def test_multihop_samples_keep_their_titles(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps({"corpus": [{"title": "Ada", "text": "Ada " + LONG},
                                                            {"title": "Tiny", "text": "too short"}]}))
    assert [(p.source, p.title) for p in corpus.multihop_passages(tmp_path)] == [("multihop", "Ada")]


def test_stdlib_passages_are_docstrings_titled_by_qualified_name():
    json_docs = [p for p in corpus.stdlib_passages() if p.title.split(".")[0] == "json"]
    titles = {p.title for p in json_docs}
    assert "json" in titles and "json.dumps" in titles
    assert all(p.source == "stdlib" for p in json_docs)
