"""Reading the model's ReAct replies: the two well-formed shapes, the forgiven decorations, and what is
refused (and told back to the model) rather than guessed."""

import pytest

from tracegraph.flow.agent.prompting import (
    FinalAnswer, ToolCall, Unreadable, parse_reply, system_prompt, user_prompt,
)
from tracegraph.flow.agent.tool_config import parse_tool
from tracegraph.schemas.agent import AgentStep


def test_well_formed_action_with_json_input():
    reply = parse_reply('Thought: I should ask the graph.\nAction: knowledge-query\n'
                        'Action Input: {"question": "What does Helios Grid depend on?", "limit": 3}')
    assert reply == ToolCall("I should ask the graph.", "knowledge-query",
                             {"question": "What does Helios Grid depend on?", "limit": "3"})


def test_final_answer_keeps_every_line_of_the_answer():
    reply = parse_reply("Thought: I know it now.\nFinal Answer: Corvid Analytics.\nIt was acquired later.")
    assert reply == FinalAnswer("I know it now.", "Corvid Analytics.\nIt was acquired later.")


def test_an_unknown_tool_is_still_a_call_the_loop_can_refuse_by_name():
    assert parse_reply("Thought: hmm\nAction: web-search\nAction Input: {}") == ToolCall("hmm", "web-search", {})


@pytest.mark.parametrize("text", ["I think the answer is 42.", "", "Thought: only thinking, no decision"])
def test_garbage_is_unreadable_and_says_what_is_expected(text):
    reply = parse_reply(text)
    assert isinstance(reply, Unreadable) and "Final Answer:" in reply.problem


def test_broken_json_input_is_unreadable_not_guessed():
    reply = parse_reply('Thought: t\nAction: calculator\nAction Input: {"expression": "1+')
    assert isinstance(reply, Unreadable) and "not a JSON object" in reply.problem and reply.thought == "t"


@pytest.mark.parametrize("text, expected", [
    ("**Thought:** add\n**Action:** `calculator`\n**Action Input:** {\"expression\": \"2*3\"}",
     ToolCall("add", "calculator", {"expression": "2*3"})),
    ("```\nthought: add\naction: calculator\naction input: 2*3\n```", ToolCall("add", "calculator", {"input": "2*3"})),
    ('Thought: add\nAction: calculator.\nAction Input: ```json\n{"expression": "2*3"}\n```',
     ToolCall("add", "calculator", {"expression": "2*3"})),
    ("I will add.\nAction: calculator\nAction Input: \"2*3\"", ToolCall("I will add.", "calculator", {"input": "2*3"})),
])
def test_decorations_case_and_plain_inputs_are_forgiven(text, expected):
    assert parse_reply(text) == expected


def test_a_made_up_observation_and_what_follows_it_are_dropped():
    reply = parse_reply("Thought: ask\nAction: knowledge-query\nAction Input: {\"question\": \"q\"}\n"
                        "Observation: Corvid.\nThought: done\nFinal Answer: Corvid.")
    assert reply == ToolCall("ask", "knowledge-query", {"question": "q"})


def test_the_first_of_action_and_final_answer_wins():
    assert isinstance(parse_reply("Thought: t\nFinal Answer: 3\nAction: calculator"), FinalAnswer)


def test_prompts_list_the_tools_and_replay_the_steps():
    tool = parse_tool("calculator", '{"type": "calculator", "description": "Arithmetic.", '
                                    '"arguments": [{"name": "expression", "description": "e.g. 1+2"}]}')
    system = system_prompt([tool])
    assert "- calculator: Arithmetic." in system and "argument expression (string): e.g. 1+2" in system
    prompt = user_prompt("What is 2*3?", [AgentStep(thought="add", action="calculator",
                                                    arguments={"expression": "2*3"}, observation="6")])
    assert prompt.splitlines() == ["Question: What is 2*3?", "Thought: add", "Action: calculator",
                                   'Action Input: {"expression": "2*3"}', "Observation: 6", "What is your next step?"]


def test_doctests():
    import doctest

    import tracegraph.flow.agent.prompting as module
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
