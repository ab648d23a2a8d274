"""How the platform is structured, from what the graph knows: its main groups (communities of the fact
graph) and how they connect (the canonical dependencies between groups). Pure: the community levels
and the landscape come in, so a hand-made graph gives a known structure.

The level told is the finest whose groups holding dependencies number at most `most`: fine enough to
tell the parts apart, coarse enough to be read at once (`most`, 8 by default). A group's measure is its share of the
landscape's dependency facts (inside it, or leaving or entering it); a link's, its share of them too;
both rank what the answer shows and the evidence under it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tracegraph.base.architecture.landscape import Dependency, Landscape


@dataclass(frozen=True, slots=True)
class Group:
    community: str
    title: str
    members: frozenset[str]
    services: tuple[str, ...]  # members taking part in a dependency or owned, most connected first
    inside: tuple[Dependency, ...]  # dependencies between two of its members
    measure: float  # its share of the landscape's dependency facts, 0 to 1


@dataclass(frozen=True, slots=True)
class Link:
    source: str  # the dependent group's community
    target: str
    dependencies: tuple[Dependency, ...]
    measure: float  # its share of the landscape's dependency facts, 0 to 1 (on the same scale as a group's)


@dataclass(frozen=True, slots=True)
class Structure:
    level: int
    groups: tuple[Group, ...]  # largest measure first
    links: tuple[Link, ...]  # largest measure first
    others: int  # groups of the level left out: no dependency touches them


def platform_structure(levels: Sequence[Mapping[str, Sequence[str]]], landscape: Landscape, most: int = 8) -> Structure:
    """The structure at the chosen level of `levels` (level → community → members, fine to coarse)."""
    if not levels:
        return Structure(0, (), (), 0)
    level = _chosen_level(levels, landscape, most)
    communities = levels[level]
    group_of = {m: c for c, members in communities.items() for m in members}
    touching: dict[str, list[Dependency]] = defaultdict(list)
    for d in landscape.dependencies:
        for community in dict.fromkeys([group_of.get(d.dependent), group_of.get(d.dependency)]):
            if community is not None:
                touching[community].append(d)
    chosen = [c for c in communities if touching[c]] or \
        sorted((c for c in communities if len(communities[c]) > 1), key=lambda c: -len(communities[c]))[:most]
    total = max(len(landscape.dependencies), 1)
    order = {e: i for i, e in enumerate(landscape.services())}
    groups = []
    for community in chosen:
        members = frozenset(communities[community])
        services = tuple(sorted((e for e in members if e in order), key=order.__getitem__))
        named = services or tuple(sorted(members, key=landscape.name))
        inside = sorted((d for d in touching[community] if d.dependent in members and d.dependency in members),
                        key=lambda d: (order[d.dependent], order[d.dependency]))  # the best connected first
        groups.append(Group(community, landscape.names(named[:3]), members, services, tuple(inside),
                            round(len(touching[community]) / total, 4)))
    groups.sort(key=lambda g: (-g.measure, -len(g.members), g.title))
    kept = {g.community for g in groups}
    between: dict[tuple[str, str], list[Dependency]] = defaultdict(list)
    for d in landscape.dependencies:
        a, b = group_of.get(d.dependent), group_of.get(d.dependency)
        if a in kept and b in kept and a != b:
            between[(a, b)].append(d)
    links = sorted((Link(a, b, tuple(found), round(len(found) / total, 4)) for (a, b), found in between.items()),
                   key=lambda link: (-link.measure, link.source, link.target))
    return Structure(level, tuple(groups), tuple(links), len(communities) - len(groups))


def _chosen_level(levels: Sequence[Mapping[str, Sequence[str]]], landscape: Landscape, most: int) -> int:
    ends = {e for d in landscape.dependencies for e in (d.dependent, d.dependency)}
    for level, communities in enumerate(levels):
        holding = [c for c, members in communities.items() if ends & set(members)] or \
            [c for c, members in communities.items() if len(members) > 1]
        if len(holding) <= most:
            return level
    return len(levels) - 1
