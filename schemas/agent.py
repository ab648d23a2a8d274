"""The ReAct agent's requests and responses, in upstream TrustGraph's wire shapes."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tracegraph.schemas.base import Message, ServiceResponse
from tracegraph.schemas.fields import Name, Question
from tracegraph.schemas.rdf import TripleList


class AgentStep(Message):
    """One think / act / observe cycle, as carried in `history`."""

    thought: str = ""
    action: str = ""
    arguments: dict[str, str] = {}
    observation: str = ""


class AgentRequest(Message):
    """`session_id` names the trace (`urn:trustgraph:agent:{session_id}`); empty = a new one."""

    schema_name: ClassVar[str] = "agent-request"

    question: Question
    state: str | None = None
    group: list[str] | None = None
    history: list[AgentStep] = []
    user: Name = "default"
    collection: Name = "default"
    streaming: bool = False
    session_id: str = ""
    explain: bool = True
    max_iterations: int | None = Field(None, alias="max-iterations", ge=1, le=50)


class AgentResponse(ServiceResponse):
    """A `thought`, `action`, `observation` or `answer` message (content streamed in pieces when
    `streaming`, each piece's message ending with `end_of_message`), or an `explain` event; the
    last message of the request has `end_of_dialog`.

    An explain event is also a lightweight provenance event (the query-time-provenance spec):
    `chunk_type: "provenance"` and `provenance_refs`, the IRIs of the nodes the step created, so a
    client of that spec can build the graph from references alone."""

    schema_name: ClassVar[str] = "agent-response"
    final_field: ClassVar[str] = "end_of_dialog"

    message_type: Literal["thought", "action", "observation", "answer", "explain", "error"] = "answer"
    content: str = ""
    end_of_message: bool = False
    end_of_dialog: bool = False
    message_id: str | None = None
    explain_id: str | None = None
    explain_graph: str | None = None
    explain_triples: TripleList = []
    chunk_type: Literal["provenance"] | None = None
    provenance_refs: list[str] | None = None
    in_token: int | None = None
    out_token: int | None = None
    model: str | None = None
