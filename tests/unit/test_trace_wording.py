"""How traces read to a person: counts in words (explain_render), edges by their labels (`--sources`),
and tg-demo's guided-tour wording (step headers, agent events, aligned columns)."""

from __future__ import annotations

from tracegraph.cli.explain_render import RDF_TYPE, TG, TraceRenderer
from tracegraph.cli.plurals import counted
from tracegraph.cli.trace_sources import used_item
from tracegraph.launch.tour_text import agent_event, columns, step_header, trace_pointer


def iri(value: str) -> dict:
    return {"t": "i", "i": value}


def triple(s: str, p: str, o: dict) -> dict:
    return {"s": iri(s), "p": iri(p), "o": o}


class Labels:
    """A renderer's label look-up without a gateway: the IRIs this test names."""

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels

    async def label(self, term: dict) -> str:
        return self.labels.get(term.get("i", ""), term.get("i", ""))


def test_counts_are_written_in_the_number_they_need():
    assert counted(1, "entity", "entities") == "1 entity"
    assert counted(3, "entity", "entities") == "3 entities"
    assert counted("1", "edge") == "1 edge" and counted(0, "edge") == "0 edges"


async def test_an_exploration_counts_its_edges_and_seed_entities_in_words():
    def exploration(seeds: int) -> list[dict]:
        return [triple("urn:x", RDF_TYPE, iri(TG + "Exploration")),
                triple("urn:x", TG + "edgeCount", {"t": "l", "v": "37"}),
                *(triple("urn:x", TG + "entity", iri(f"urn:e:{i}")) for i in range(seeds))]
    renderer = TraceRenderer(api=None, flow="default", collection="default")  # type: ignore[arg-type]
    one = await renderer.render("urn:x", exploration(1))
    three = await renderer.render("urn:x", exploration(3))
    assert "    Explored 37 edges from 1 seed entity" in one
    assert "    Explored 37 edges from 3 seed entities" in three
    assert not any("(s)" in line or "(ies)" in line for line in one + three)


async def test_sources_name_an_edge_by_its_labels_and_a_chunk_by_its_label():
    labels = Labels({"https://trustgraph.ai/e/helios-grid": "Helios Grid", "https://trustgraph.ai/r/depends-on":
                     "depends on", "https://trustgraph.ai/e/corvid-analytics": "Corvid Analytics"})
    edge = {"t": "t", "tr": {"s": iri("https://trustgraph.ai/e/helios-grid"),
                             "p": iri("https://trustgraph.ai/r/depends-on"),
                             "o": iri("https://trustgraph.ai/e/corvid-analytics")}}
    assert await used_item(labels, edge, {"t": "l", "v": "Chunk 1"}) == "(Helios Grid, depends on, Corvid Analytics)"  # type: ignore[arg-type]
    assert await used_item(labels, iri("urn:chunk:1"), {"t": "l", "v": "Chunk 2"}) == "Chunk: Chunk 2"  # type: ignore[arg-type]


def test_the_tour_heads_a_step_by_its_name_and_names_the_trace_once():
    assert step_header("[grounding] urn:trustgraph:prov:grounding:b282") == "[grounding]"
    assert step_header("  [focus] urn:trustgraph:prov:focus:1") == "  [focus]"
    assert step_header("      Edge: (a, b, c)") == "      Edge: (a, b, c)"
    assert trace_pointer("urn:trustgraph:question:1") == "  (the whole trace: tg-show-explain-trace urn:trustgraph:question:1)"


def test_the_tour_says_what_each_agent_event_records():
    assert agent_event("urn:trustgraph:agent:abc") == "the question"
    assert agent_event("urn:trustgraph:agent:abc/i12") == "step 12: thought, action and observation"
    assert agent_event("urn:trustgraph:agent:abc/final") == "the conclusion"
    assert agent_event("urn:trustgraph:question:abc") is None


def test_columns_line_up_and_numbers_align_right():
    rows = columns([("current", "Tomas Brandt", "[is led by]", "from a"),
                    ("earlier", "Forecasting Guild @corvid/forecasting-guild", "[is owned by, CODEOWNERS]", "from b")])
    assert rows[0].index("[") == rows[1].index("[") and rows[0].index("from") == rows[1].index("from")
    assert columns([("a", "7 bytes", "x"), ("bb", "1,120 bytes", "y")]) == ["a       7 bytes  x", "bb  1,120 bytes  y"]
    assert columns([]) == []
