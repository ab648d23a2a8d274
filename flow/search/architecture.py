"""The search processor's `architecture` service: ownership, dependencies, memory and intent checks for
one entity, read from the collection's graph through the same tools the search pipeline uses (so
ownership and memory questions asked through search reach the same answers)."""

from __future__ import annotations

from tracegraph.base.architecture import graph, intent
from tracegraph.base.architecture.dependencies import dependencies
from tracegraph.base.architecture.memory import memory
from tracegraph.base.architecture.ownership import ownership, path_ownership
from tracegraph.base.architecture.rules import CodeOwnersShelf
from tracegraph.base.architecture.verbs import verbs
from tracegraph.base.retrieval import history
from tracegraph.base.temporal.query import Rows
from tracegraph.schemas.architecture import ArchitectureRequest, ArchitectureResponse

def rows_of(tools) -> Rows:
    """A SELECT through the retrieval tools (the triples service's read-only SPARQL), as rows."""
    return lambda query, limit: history.rows(tools, query, max(1, limit))


async def architecture_answer(req: ArchitectureRequest, tools, shelf: CodeOwnersShelf, *,
                              half_life_days: float) -> ArchitectureResponse:
    """The one response to a request; UnknownEntity (→ 404 at the gateway) when the name means nothing here."""
    if req.operation == "intent-check":
        checked = await intent.check(req.change, req.work_item, tools.embed,
                                     threshold=intent.DEFAULT_THRESHOLD if req.threshold is None else req.threshold)
        # The tools learn the model's name from the embeddings reply, so it is known only now.
        model = getattr(tools, "embedding_model", None) or ""
        return ArchitectureResponse(operation=req.operation, intent=checked.model_copy(update={"model": model}))
    rows = rows_of(tools)
    if req.operation == "ownership" and graph.is_path(req.entity):
        owned = await path_ownership(rows, req.entity, shelf, (req.user, req.collection))
        return ArchitectureResponse(operation=req.operation, entity=req.entity.lstrip("/"), label=req.entity,
                                    ownership=owned)
    entity = await graph.resolve(rows, req.entity, req.collection)
    done = {"operation": req.operation, "entity": entity.iri, "label": entity.label}
    if req.operation == "ownership":
        found = await ownership(rows, entity, shelf, (req.user, req.collection))
        return ArchitectureResponse(**done, ownership=found.response)
    if req.operation == "dependencies":
        tree = await dependencies(rows, entity, depth=req.depth, direction=req.direction, verbs=verbs(req.predicates),
                                  max_edges=req.max_edges)
        return ArchitectureResponse(**done, dependencies=tree)
    remembered = await memory(rows, entity, tools.embed, question=req.query, limit=req.limit,
                              half_life_days=half_life_days)
    return ArchitectureResponse(**done, memory=remembered)
