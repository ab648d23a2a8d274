"""What `tg-invoke-agent` prints: each step with -v, and an observation the answer repeats said once."""

from __future__ import annotations

from tracegraph.cli.agent_output import REPEATED_OBSERVATION, AgentOutput

GRAPH = "Offline answer (no LLM configured): Billing depends on Ledger.\nSupporting facts:\n- Billing depends on Ledger"


def printed(verbose: bool, messages: list[tuple[str, str, bool]]) -> str:
    out: list[str] = []
    output = AgentOutput(verbose, out.append)
    for kind, content, end in messages:
        if kind == "answer":
            output.answer_chunk(content, end)
        else:
            output.step(kind, content)
    output.finish()
    return "".join(out)


def test_an_answer_that_repeats_the_observation_is_printed_once():
    out = printed(True, [("thought", "ask the graph", False), ("action", "knowledge-query {}", False),
                         ("observation", GRAPH, False), ("answer", GRAPH, True), ("answer", "", True)])
    assert out.count("Billing depends on Ledger.") == 1
    assert out == f"Thought: ask the graph\nAction: knowledge-query {{}}\n{REPEATED_OBSERVATION}\n{GRAPH}\n"


def test_an_answer_streamed_in_pieces_that_repeats_the_observation_is_printed_once():
    half = len(GRAPH) // 2
    out = printed(True, [("observation", GRAPH, False), ("answer", GRAPH[:half], False),
                         ("answer", GRAPH[half:], True)])
    assert out == f"{REPEATED_OBSERVATION}\n{GRAPH}\n"


def test_an_answer_of_its_own_follows_the_observation_in_full():
    out = printed(True, [("observation", GRAPH, False), ("answer", "Offline answer (no LLM configured): ", False),
                         ("answer", "Ledger, say the documents.", True)])
    assert out == f"Observation: {GRAPH}\nOffline answer (no LLM configured): Ledger, say the documents.\n"


def test_an_answer_that_only_begins_the_observation_keeps_both():
    out = printed(True, [("observation", GRAPH, False), ("answer", GRAPH.splitlines()[0], True)])
    assert out == f"Observation: {GRAPH}\n{GRAPH.splitlines()[0]}\n"


def test_earlier_observations_are_printed_as_they_come():
    out = printed(True, [("observation", "nothing found", False), ("thought", "ask the documents", False),
                         ("observation", GRAPH, False), ("answer", GRAPH, True)])
    assert out.startswith("Observation: nothing found\nThought: ask the documents\n" + REPEATED_OBSERVATION)


def test_without_verbose_only_the_answer_is_printed():
    assert printed(False, [("thought", "t", False), ("observation", GRAPH, False), ("answer", GRAPH, True)]) \
        == GRAPH + "\n"
