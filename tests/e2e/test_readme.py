"""The README's main job, run as a user runs it: `tg-demo` on the embedded defaults."""

from __future__ import annotations

import re
from pathlib import Path

from support.procs import free_port, tg

README = Path(__file__).resolve().parents[2] / "README.md"


def test_main_job_loads_the_corpus_and_traces_facts_to_documents(tmp_path):
    port = free_port()
    result = tg("tg-demo", "--data-dir", str(tmp_path / "data"), "--gateway-port", str(port), timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "on the inproc bus" in out and "offline extractor (no LLM configured)" in out
    assert f"gateway http://127.0.0.1:{port}/; data in {tmp_path / 'data'}" in out
    assert len(re.findall(r"loaded \S+\.md", out)) == 8 and "loaded CODEOWNERS" in out
    counts = re.search(r"knowledge graph: (\d+) chunks, (\d+) facts in (\d+) subgraphs", out)
    assert counts and int(counts.group(1)) >= 3 and int(counts.group(2)) >= 10
    assert "(Helios Grid, depends on, Corvid Analytics)   [offline extractor]" in out
    assert re.search(r"Source: Lines? [\d–]+ → Chunk \d+ → helios-grid", out)
    # A guided tour: steps by name, counts in words, one arrow, the processors' log in a file of its own.
    assert not re.search(r"^\s*\[\w+\] urn:trustgraph:", out, re.M), "a step is headed by its name, not its IRI"
    assert "urn:trustgraph:prov:" not in out and "entit(ies)" not in out and "->" not in out
    assert not re.search(r"\bWARNING\b", out + result.stderr), "log records go to the log file"
    assert f"the processors' log (warnings and errors of this run): {tmp_path / 'data' / 'tg-demo.log'}" in out
    assert "line 24: owner 'corvid-billing'" in (tmp_path / "data" / "tg-demo.log").read_text()
    loaded = re.findall(r"^  loaded .+$", out, re.M)
    assert len(loaded) == 9 and len({line.index(" bytes") for line in loaded}) == 1, "the files' sizes line up"
    assert "GraphRAG, explained: 'What does Helios Grid depend on?'" in out
    graph_rag = out.split("GraphRAG, explained")[1].split("Document RAG, explained")[0]
    steps = re.findall(r"^\s+\[(\w+)\]$", graph_rag, re.M)
    assert steps == ["question", "grounding", "exploration", "focus", "synthesis"]
    documents = out.split("Document RAG, explained")[1].split("Agent: ")[0]
    assert re.findall(r"^\s+\[(\w+)\]$", documents, re.M) == [
        "question", "grounding", "exploration", "synthesis"]
    assert re.search(r"Chunk: Chunk \d+ → helios-grid", documents)
    assert re.search(r'"Helios Grid depends on Corvid Analytics for load forecasting\." \(helios-grid, line \d+\)',
                     documents)
    agent = out.split("Agent: ")[1].split("Global search")[0]
    assert "action: knowledge-query" in agent and "[explain] recorded the conclusion" in agent
    assert re.search(r"\(the whole trace: tg-show-explain-trace urn:trustgraph:agent:[\w-]+\)", agent)
    assert "asking the knowledge graph (tool knowledge-query) the question as it was put." in " ".join(agent.split())
    assert re.search(r"observation: Helios Grid depends on [^\n]*Corvid Analytics[^\n]*\. \(\+\d+ more lines\)", agent)
    # Each answer once, labelled `Answer:`, its offline label on the label's line rather than said again: the
    # graph states what Helios Grid depends on, the documents quote the sentence that says it.
    for section in (graph_rag, documents, agent):
        assert len(re.findall(r"^  Answer: offline \(no LLM configured\)[,:] ", section, re.M)) == 1
    assert re.search(r"^  Answer: offline \(no LLM configured\): Helios Grid depends on [^\n]*Corvid Analytics",
                     graph_rag, re.M)
    assert "Offline answer" not in out and "answer:" not in out
    strategic = out.split("Global search (community reports), explained")[1].split("GraphRAG, as of")[0]
    # A question about risks: the risks computed over the graph's architecture, each traced to its facts.
    assert re.search(r"Risk #1 \[severity 0\.\d+\] Orbis Cloud is a single point of failure", strategic)
    assert re.search(r"Edge: .+\n\s+Reason: evidence of risk #1 .+\n\s+Source: (?:Lines? [\d–]+ → )?", strategic)
    assert "architectural risks computed from the graph's dependencies, owners and records" in strategic
    assert "query type strategic" in strategic
    # One point-in-time answer: the 2024 owner as of 2024-06-01, the 2025 owner today, and the diff.
    then = out.split("GraphRAG, as of 2024-06-01: 'Who owns Skyline?'")[1].split("GraphRAG, today")[0]
    today = out.split("GraphRAG, today: 'Who owns Skyline?'")[1].split("changed since")[0]
    assert "Answer: As of 2024-06-01 (--as-of):\n    offline (no LLM configured)" in then
    assert "offline (no LLM configured): Skyline is owned by Forecasting Guild." in then and "Grid Analytics" not in then
    assert "offline (no LLM configured): Skyline is owned by Grid Analytics team." in today
    assert "is owned by Forecasting Guild" not in today
    assert "Skyline is owned by: Forecasting Guild → Grid Analytics team" in out
    # The architecture routes on the sample services: a stale CODEOWNERS line, a dependency cycle, the ADRs.
    architecture = out.split("Ownership (GET /api/v1/ownership/Skyline")[1].split("stored explain traces")[0]
    assert "Skyline is owned by Grid Analytics team (@corvid/grid-analytics), as its newest source says: " \
           "skyline-review-2025, line 5, dated 2025-09-15." in " ".join(architecture.split())
    assert re.search(r"current  Grid Analytics team @corvid/grid-analytics +\[is owned by\] +from skyline-review-2025, "
                     r"line 5 \(2025-09-15\)", architecture)
    assert re.search(r"earlier  Forecasting Guild @corvid/forecasting-guild +\[is owned by, CODEOWNERS\] +from "
                     r"skyline-review-2024, line 5 \(2024-03-04; superseded on 2025-09-15 by skyline-review-2025, "
                     r"line 5\); CODEOWNERS, line 9 \(", architecture)
    owners = re.findall(r"^  (?:current|earlier)  .+$", architecture, re.M)
    assert len(owners) >= 3 and len({line.index("[") for line in owners}) == 1, "owner columns line up"
    assert architecture.index("current  Grid Analytics") < architecture.index("earlier  Forecasting Guild")
    assert "! The sources disagree" in architecture
    assert "cycle: Skyline → Demand Feed → Storage Gateway → Skyline" in architecture
    assert "  Skyline depends on Demand Feed  (weight " in architecture
    assert re.search(r"decision\s+ADR 0012: Run Skyline in two regions  \(Tomas Brandt, 2025-10-02\)", architecture)
    assert re.search(r"→ ok\n.*\n.*\n\nIntent check .*→ MISMATCH", architecture)
    assert "advisory: The code changes in this PR appear semantically distant" in architecture
    search = architecture.split("Search, explained: 'Who owns Skyline?'")[1]
    assert re.search(r"Edge: \(Skyline, is owned by, Grid Analytics team\)\n\s+Reason: the graph says who owns[^\n]*\n"
                     r"\s+Source: Line 5 → Chunk 1 → skyline-review-2025", search)
    assert "Reason: an earlier owner" in search and "more (tg-show-explain-trace)" in search
    listed = out.split("stored explain traces")[1]
    assert {"GraphRAG", "DocRAG", "Agent", "Global", "Search"} <= set(re.findall(r"^  (\w+)\s+urn:", listed, re.M))
    assert "(part of urn:trustgraph:agent:" in listed
    assert re.search(r"Edge: \(Helios Grid, depends on, Corvid Analytics\)\n\s+Reason: offline selection", out)
    assert "Answer: offline (no LLM configured): Helios Grid depends on Corvid Analytics.\n" in out
    assert "- Helios Grid depends on Corvid Analytics (helios-grid, line 9)" in out and "Sources: helios-grid" in out
    assert out.rstrip().endswith("done")
    assert "Traceback" not in result.stderr
    again = tg("tg-demo", "--data-dir", str(tmp_path / "data"), timeout=300)
    assert again.returncode == 0, again.stderr
    assert re.search(r"knowledge graph: (\d+) chunks, (\d+) facts", again.stdout).groups() == counts.groups()[:2], \
        "a second run over the same data directory must not duplicate anything"


def test_readme_names_the_commands_ci_runs():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    test_command = re.search(r"^TEST_COMMAND=\"(.+)\"$", ci, re.M).group(1)
    assert test_command in text, "README must show exactly the test command .ci/run runs"
    assert "tg-demo" in text
