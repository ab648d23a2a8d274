"""Time in the graph: when each fact was learned and retracted, when it held in the world, and what
superseded it (bi-temporal history beside the current graph)."""
