"""Every ingest command as a user runs it, against `tg-launch` on the embedded defaults."""

from __future__ import annotations

import re

import pytest

from support.ingest import CORPUS
from support.procs import launched, tg, wait_until

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def gateway(tmp_path):
    with launched(tmp_path / "data") as url:
        yield url


def ok(*command: str):
    result = tg(*command, timeout=120)
    assert result.returncode == 0, f"{command[0]} failed: {result.stderr}"
    return result.stdout


def test_library_load_query_and_remove_commands(gateway, tmp_path):
    u = ("-u", gateway)
    out = ok("tg-load-text", *u, str(CORPUS / "helios-grid.md"), str(CORPUS / "orbis-systems.md"), "--wait")
    assert "extraction finished for 2 document(s)" in out
    doc = re.search(r"helios-grid\.md: (urn:trustgraph:doc:\w+)", out).group(1)

    listed = ok("tg-show-library-documents", *u)
    assert doc in listed and "helios-grid.md" in listed and "text/markdown" in listed

    # Answers are library documents too, listed apart from the sources: --answers, or --all for both.
    ok("tg-invoke-graph-rag", *u, "-q", "What does Helios Grid depend on?")
    wait_until(lambda: "GraphRAG Answer: What does Helios Grid depend on?" in ok("tg-show-library-documents", *u,
                                                                                "--answers"), what="a stored answer")
    answers = ok("tg-show-library-documents", *u, "--answers")
    assert doc not in answers and "source" not in answers
    assert "GraphRAG Answer" not in ok("tg-show-library-documents", *u)
    both = ok("tg-show-library-documents", *u, "--all")
    assert doc in both and re.search(r"GraphRAG Answer: .+ answer$", both, re.M) and re.search(r"helios-grid\.md .+ source$",
                                                                                              both, re.M)

    facts = ok("tg-query-triples", *u, "-s", "https://trustgraph.ai/e/helios-grid", "-p",
               "https://trustgraph.ai/r/depends-on")
    assert "<https://trustgraph.ai/e/corvid-analytics>" in facts

    provenance = ok("tg-show-graph", *u, "-g", "source", "-l", "100000")
    assert "<https://trustgraph.ai/ns/contains> << <https://trustgraph.ai/e/helios-grid>" in provenance

    sparql = ok("tg-query-sparql", *u, "-q",
                "SELECT ?title WHERE { ?d a <https://trustgraph.ai/ns/Document> ; "
                "<http://purl.org/dc/elements/1.1/title> ?title } ORDER BY ?title")
    assert '"helios-grid.md"' in sparql and '"orbis-systems.md"' in sparql  # the title is the path

    refused = tg("tg-query-sparql", *u, "-q", "DELETE WHERE { ?s ?p ?o }")
    assert refused.returncode == 1 and "update" in refused.stderr.lower()

    turtle = tmp_path / "extra.ttl"
    turtle.write_text("@prefix ex: <http://example.org/> .\nex:a ex:knows ex:b .\nex:b ex:knows ex:c .\n")
    assert "sent 2 quads" in ok("tg-load-turtle", *u, str(turtle))
    wait_until(lambda: "<http://example.org/b>" in ok("tg-query-triples", *u, "-s", "http://example.org/a"),
               what="imported triples")

    added = ok("tg-add-library-document", *u, str(CORPUS / "corvid-analytics.md"), "--title", "Corvid")
    assert "text/markdown" in added and '"Corvid"' in added

    removed = ok("tg-remove-library-document", *u, "--id", doc)
    assert re.search(r"removed urn:trustgraph:doc:\w+: [1-9]\d* chunks, [1-9]\d* vectors, [1-9]\d* triples "
                     r"\(flows: default\)", removed)
    assert doc not in ok("tg-show-library-documents", *u)
    assert "corvid-analytics" not in ok("tg-query-triples", *u, "-s", "https://trustgraph.ai/e/helios-grid",
                                        "-p", "https://trustgraph.ai/r/depends-on")


def test_bad_input_gives_one_line_errors(gateway, tmp_path):
    u = ("-u", gateway)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    result = tg("tg-load-text", *u, str(empty))
    assert result.returncode == 1 and "document is empty" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(b"%PDF-1.7\x00\x01 not really")
    result = tg("tg-load-pdf", *u, str(garbage))
    assert result.returncode == 1 and "unreadable PDF" in result.stderr

    bad = tmp_path / "bad.ttl"
    bad.write_text("this is not turtle")
    result = tg("tg-load-turtle", *u, str(bad))
    assert result.returncode == 1 and "cannot parse" in result.stderr

    result = tg("tg-remove-library-document", *u, "--id", "urn:nope")
    assert result.returncode == 1 and "no document 'urn:nope'" in result.stderr
