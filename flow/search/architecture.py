"""The search processor's `architecture` service: ownership, dependencies, memory and intent checks for
one entity, read from the collection's graph through the same tools the search pipeline uses (so
ownership and memory questions asked through search reach the same answers)."""

from __future__ import annotations

from tracegraph.base.architecture import at_date, graph, intent
from tracegraph.base.architecture.dependencies import dependencies
from tracegraph.base.architecture.memory import memory
from tracegraph.base.architecture.ownership import ownership, path_ownership
from tracegraph.base.architecture.rules import CodeOwnersShelf
from tracegraph.base.architecture.verbs import verbs
from tracegraph.base.errors import UnknownEntity
from tracegraph.base.retrieval import history
from tracegraph.base.retrieval.unknown_names import nearest_labels
from tracegraph.base.retrieval.timeline import NO_HISTORY
from tracegraph.base.temporal.query import Rows
from tracegraph.schemas.architecture import ArchitectureRequest, ArchitectureResponse

PATH_NOW = "a repository path's owners come from the CODEOWNERS files as they are now, whatever the as-of"


async def _resolve(rows: Rows, tools, name: str, collection: str) -> graph.Entity:
    """The entity `name` means (in any case, or by alias); an unknown name's error lists the nearest ones."""
    try:
        return await graph.resolve(rows, name, collection)
    except UnknownEntity as exc:
        nearest = await nearest_labels(tools, name)
        raise UnknownEntity(f"{exc}; nearest: {', '.join(nearest)}" if nearest else str(exc)) from None


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
    as_of, notes = await _as_of(rows, req)
    if req.operation == "ownership" and graph.is_path(req.entity):
        owned = await path_ownership(rows, req.entity, shelf, (req.user, req.collection))
        return ArchitectureResponse(operation=req.operation, entity=req.entity.lstrip("/"), label=req.entity,
                                    ownership=owned, notes=[*notes, *([PATH_NOW] if as_of else [])])
    entity = await _resolve(rows, tools, req.entity, req.collection)
    done = {"operation": req.operation, "entity": entity.iri, "label": entity.label, "as_of": as_of, "notes": notes}
    if req.operation == "ownership":
        found = await ownership(rows, entity, shelf, (req.user, req.collection), as_of)
        return ArchitectureResponse(**done, ownership=found.response)
    if req.operation == "dependencies":
        tree = await dependencies(rows, entity, depth=req.depth, direction=req.direction, verbs=verbs(req.predicates),
                                  max_edges=req.max_edges, as_of=as_of)
        return ArchitectureResponse(**done, dependencies=tree)
    remembered = await memory(rows, entity, tools.embed, question=req.query, limit=req.limit,
                              half_life_days=half_life_days, as_of=as_of)
    return ArchitectureResponse(**done, memory=remembered)


async def _as_of(rows: Rows, req: ArchitectureRequest) -> tuple[str | None, list[str]]:
    """The date the answer stands at, and what to say when it cannot be read as of it (no history)."""
    if req.as_of is None:
        return None, []
    if await at_date.keeps_history(rows):
        return req.as_of, []
    return None, [NO_HISTORY]
