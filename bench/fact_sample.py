"""A random sample of the knowledge facts a benchmark run stored, each with the document and lines it was
read from, for a person to judge (the extraction issue's junk measure: the share a careful reader would
reject). Reads the stores a run left in its --data-dir (bench/multihop_public.py, bench/architecture_public.py)
directly, read-only; prints, never judges.

    .venv/bin/python bench/fact_sample.py /tmp/mh --collection musique -n 100
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

import pyoxigraph as ox

from tracegraph.base.provenance.vocab import RDF, is_knowledge
from tracegraph.base.stores.terms import from_ox
from tracegraph.schemas.rdf import Triple

FACTS = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
PLACED = """PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?parent ?first ?last ?line WHERE {
  GRAPH <urn:graph:source> { ?sg tg:contains <<( %s )>> ; prov:wasDerivedFrom ?parent .
    OPTIONAL { ?sg tg:firstLine ?first ; tg:lastLine ?last } OPTIONAL { ?parent tg:lineNumber ?line } } }"""
PARENTS = "SELECT ?x ?up WHERE { GRAPH <urn:graph:source> { ?x <http://www.w3.org/ns/prov#wasDerivedFrom> ?up } }"
TITLES = "SELECT ?d ?t WHERE { ?d <http://purl.org/dc/elements/1.1/title> ?t }"
LABEL = "SELECT ?l WHERE { <%s> <http://www.w3.org/2000/01/rdf-schema#label> ?l } LIMIT 1"


def sample(store: ox.Store, n: int, seed: int) -> list[dict[str, str]]:
    facts = []
    for row in store.query(FACTS, use_default_graph_as_union=False):
        fact = Triple(s=from_ox(row["s"]), p=from_ox(row["p"]), o=from_ox(row["o"]))
        if fact.p.iri != RDF.type.iri and is_knowledge(fact):
            facts.append((row["s"], row["p"], row["o"]))
    picked = random.Random(seed).sample(sorted(facts, key=str), min(n, len(facts)))
    parents = {r["x"].value: r["up"].value for r in store.query(PARENTS)}
    titles = {r["d"].value: r["t"].value for r in store.query(TITLES)}
    return [_described(store, s, p, o, parents, titles) for s, p, o in picked]


def _described(store: ox.Store, s, p, o, parents: dict[str, str], titles: dict[str, str]) -> dict[str, str]:
    where = []
    for row in store.query(PLACED % f"{s} {p} {o}"):
        first, last, line = (row[k].value if row[k] is not None else "" for k in ("first", "last", "line"))
        span = f"line {line}" if line else (f"line {first}" if first == last else f"lines {first}-{last}") if first \
            else ""
        node = row["parent"].value
        while node in parents and node not in titles:  # chunk → page → document
            node = parents[node]
        where.append(f"{titles.get(node, node)} {span}".strip())
    return {"subject": _label(store, s), "predicate": re.split(r"[/#]", p.value)[-1].replace("-", " "),
            "object": _label(store, o) if isinstance(o, ox.NamedNode) else o.value[:200],
            "sources": "; ".join(sorted(set(where)))}


def _label(store: ox.Store, node) -> str:
    found = list(store.query(LABEL % node.value))
    return found[0]["l"].value if found else node.value


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data_dir", type=Path, help="a benchmark run's --data-dir")
    p.add_argument("--collection", required=True, help="the collection to sample (musique, hotpotqa, govuk …)")
    p.add_argument("--user", default="default", help="its user [default]")
    p.add_argument("-n", type=int, default=100, help="facts to sample [100]")
    p.add_argument("--seed", type=int, default=7, help="random seed [7]")
    p.add_argument("--text", type=Path, help="print what each fact's first source says: a multihop sample's JSON "
                                             "(../shared/data/multihop/musique-train-100.json) or the architecture "
                                             "corpus folder (../shared/data/architecture)")
    args = p.parse_args()
    path = args.data_dir / "triples" / args.user / args.collection
    if not path.exists():
        raise SystemExit(f"fact_sample: no collection {args.collection!r} under {args.data_dir / 'triples'}")
    store = ox.Store.read_only(str(path))
    texts = source_texts(args.text) if args.text else None
    for k, fact in enumerate(sample(store, args.n, args.seed), 1):
        print(f"{k:3}. {fact['subject']} | {fact['predicate']} | {fact['object']}\n       ← {fact['sources']}")
        if texts is not None:
            for where in fact["sources"].split("; ")[:1]:
                print(f"       » {texts(where)}")


def source_texts(origin: Path):
    """A reader of what a source says: `origin` is a multihop sample (passage text by title) or the architecture
    corpus folder (the cited lines of the file at the title's path)."""
    if origin.is_file():
        passages = {p["title"]: p["text"] for p in json.loads(origin.read_text())["corpus"]}
        return lambda where: " ".join(passages.get(re.sub(r" lines? [\d-]+$", "", where), "?").split())[:600]

    def lines(where: str) -> str:
        found = re.match(r"(?P<path>.+?) lines? (?P<first>\d+)(?:-(?P<last>\d+))?$", where)
        if not found or not (origin / found["path"]).is_file():
            return "?"
        text = (origin / found["path"]).read_text(errors="replace").splitlines()
        first = int(found["first"])
        return " / ".join(t.strip() for t in text[first - 1:int(found["last"] or first)])[:600]
    return lines


if __name__ == "__main__":
    main()
