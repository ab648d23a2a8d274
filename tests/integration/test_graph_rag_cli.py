"""GraphRAG as a user runs it: load the corpus, ask with --explainable, then read the stored trace
back, trace it to its sources, and export it."""

from __future__ import annotations

import re

import pyoxigraph
import pytest

from support.ingest import CORPUS
from support.procs import launched, tg

pytestmark = pytest.mark.timeout(300)


def ok(*command: str) -> str:
    result = tg(*command, timeout=120)
    assert result.returncode == 0, f"{command[0]} failed: {result.stderr}"
    return result.stdout


def test_explained_answer_stored_trace_sources_and_exports(tmp_path):
    with launched(tmp_path / "data") as url:
        u = ("-u", url)
        ok("tg-load-text", *u, *(str(p) for p in sorted(CORPUS.glob("*.md"))), "--wait")
        out = ok("tg-invoke-graph-rag", *u, "-q", "What does Helios Grid depend on?", "--explainable", "--sources")
        order = [m.group(1) for m in re.finditer(r"^\[(\w+)\] urn:trustgraph:", out, re.M)]
        assert order == ["question", "grounding", "exploration", "focus", "synthesis"]
        assert re.search(r"Edge: \(Helios Grid, depends on, Corvid Analytics\)\n\s+Reason: offline selection: "
                         r"embedding similarity [0-9.]+ to (the question|'[^']+'), from passage #\d+ \(personalised PageRank [0-9.]+\), "
                         r"score [0-9.]+\n"
                         r"\s+Source: Lines? [0-9–]+ → Chunk 1 → helios-grid", out)
        assert re.search(r"Offline answer \(no LLM configured\): Helios Grid depends on [^\n]*Corvid Analytics", out)
        assert "Sources:\n  helios-grid" in out
        synthesis = re.search(r"^\[synthesis\] (\S+)", out, re.M).group(1)

        shown = ok("tg-show-explain-trace", *u, synthesis)
        assert [m.group(1) for m in re.finditer(r"^\[(\w+)\]", shown, re.M)] == order
        assert "Edge: (Helios Grid, depends on, Corvid Analytics)" in shown

        sources = ok("tg-show-explain-trace", *u, synthesis, "--sources")
        assert re.search(r"^\(Helios Grid, depends on, Corvid Analytics\)\n\s+Source: Lines? [0-9–]+ → Chunk 1 → helios-grid",
                         sources, re.M)
        assert "<< <https://trustgraph.ai/e/" not in sources, "edges by their labels, as the plain view shows them"

        trig = ok("tg-export-explain-trace", *u, synthesis, "--format", "trig", "--trace-only")
        quads = list(pyoxigraph.parse(trig.encode(), format=pyoxigraph.RdfFormat.TRIG))
        assert quads and all(q.graph_name == pyoxigraph.NamedNode("urn:graph:retrieval") for q in quads)
        assert any(isinstance(q.object, pyoxigraph.Triple) for q in quads), "edges stay RDF 1.2 triple terms"
        nquads = ok("tg-export-explain-trace", *u, synthesis, "--format", "nquads", "--trace-only")
        assert len(list(pyoxigraph.parse(nquads.encode(), format=pyoxigraph.RdfFormat.N_QUADS))) == len(quads)

        from prov.model import ProvActivity, ProvDerivation, ProvDocument
        document = ProvDocument.deserialize(content=ok("tg-export-explain-trace", *u, synthesis, "--format",
                                                       "prov-json", "--trace-only"), format="json")
        activities = [r for r in document.get_records(ProvActivity)]
        assert [a.identifier.uri for a in activities] == [synthesis.replace("prov:synthesis", "question")]
        everything = ProvDocument.deserialize(content=ok("tg-export-explain-trace", *u, synthesis, "--format",
                                                         "prov-json"), format="json")
        extraction = [a.identifier.uri for a in everything.get_records(ProvActivity)]
        assert synthesis.replace("prov:synthesis", "question") in extraction and len(extraction) > 1, \
            "by default the export carries the extraction activities the trace's edges resolve through"
        assert len(list(document.get_records(ProvDerivation))) >= 4  # grounding … synthesis chain

        missing = tg("tg-show-explain-trace", *u, "urn:trustgraph:question:nope")
        assert missing.returncode == 1 and "no stored trace" in missing.stderr
        empty = tg("tg-invoke-graph-rag", *u, "-q", "   ")
        assert empty.returncode == 1 and "empty question" in empty.stderr
