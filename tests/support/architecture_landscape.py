"""A small hand-made architecture landscape (the sample corpus's story, plus a stale owner and a replaced
service) for the risk, report and global-answer unit tests: what each is expected to find is known."""

from __future__ import annotations

from datetime import UTC, datetime

from tracegraph.base.architecture.landscape import ArchitectureRecord, Evidence, OwnerClaim, assemble
from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.base.provenance.vocab import RDF, TG
from tracegraph.schemas.architecture import Source
from tracegraph.schemas.rdf import Triple, fact_key, iri, literal

TODAY = datetime(2026, 6, 20, tzinfo=UTC)
NAMES = ["Skyline", "Orbis Cloud", "Nimbus Cloud", "Demand Feed", "Storage Gateway", "Sable Water Authority",
         "Grid Analytics team", "Forecasting Guild", "Ada Kern", "Ledger", "Payments team", "Ad",
         "Feature Flag Service", "flagd", "Helios Grid", "Corvid Analytics", "Checkout", "Cart", "Currency", "Payment",
         "Shipping", "Email"]
E = {name: entity_uri(name) for name in NAMES}
ADR = Source(document="urn:doc:adr-7", title="adr-0007", date="2024-05-10", kind="graph")
REVIEW_2025 = Source(document="urn:doc:review-2025", title="skyline-review-2025", date="2025-09-15", kind="graph")
REVIEW_2024 = Source(document="urn:doc:review-2024", title="skyline-review-2024", date="2024-03-04", kind="graph")
OLD_WIKI = Source(document="urn:doc:wiki", title="ledger-wiki", date="2021-01-10", kind="graph")
CODEOWNERS = Source(document="urn:doc:codeowners", title="CODEOWNERS", line=9, kind="codeowners")
POSTMORTEM = Source(document="urn:doc:pm", title="postmortem", line=6, date="2026-06-20", kind="graph")


def fact(s: str, label: str, o: str) -> Triple:
    return Triple(s=iri(E[s]), p=iri(relation_uri(label)), o=iri(E[o]))


DEPENDENCIES = [fact("Skyline", "depends on", "Orbis Cloud"), fact("Skyline", "runs on", "Orbis Cloud"),
                fact("Skyline", "depends on", "Nimbus Cloud"), fact("Skyline", "depends on", "Demand Feed"),
                fact("Demand Feed", "calls", "Storage Gateway"), fact("Storage Gateway", "depends on", "Orbis Cloud"),
                fact("Storage Gateway", "calls", "Skyline"), fact("Sable Water Authority", "uses", "Skyline"),
                fact("Ad", "depends on", "Feature Flag Service")]
OWNED = fact("Skyline", "is owned by", "Grid Analytics team")
LEDGER = fact("Ledger", "is owned by", "Payments team")
REPLACED = fact("Feature Flag Service", "is replaced by", "flagd")
INCIDENT = "urn:trustgraph:memory:outage"


def landscape():
    cited = {fact_key(f): [ADR] for f in DEPENDENCIES}
    cited |= {fact_key(OWNED): [REVIEW_2025], fact_key(LEDGER): [OLD_WIKI], fact_key(REPLACED): [ADR]}
    rule = "urn:trustgraph:codeowners-rule:9"
    rules = [OwnerClaim(E["Skyline"], E[o], "CODEOWNERS", "codeowners",
                        Evidence(Triple(s=iri(rule), p=TG.codeOwner, o=iri(E[o])), (CODEOWNERS,)))
             for o in ("Forecasting Guild", "Ada Kern")]
    former = [OwnerClaim(E["Skyline"], E["Forecasting Guild"], "is owned by", "graph",
                         Evidence(fact("Skyline", "is owned by", "Forecasting Guild"), (REVIEW_2024,)),
                         until="2025-09-15")]
    links = (("affected", E["Skyline"]), ("affected", E["Demand Feed"]), ("caused-by", E["Orbis Cloud"]))
    node = iri(INCIDENT)
    outage = ArchitectureRecord(
        INCIDENT, "failure-pattern", "Skyline forecast outage", "2026-06-20", "", links,
        (Evidence(Triple(s=node, p=RDF.type, o=TG.FailurePattern), (POSTMORTEM,)),
         *(Evidence(Triple(s=node, p=TG.affected if r == "affected" else TG.causedBy, o=iri(e)), (POSTMORTEM,))
           for r, e in links)), POSTMORTEM, cause="The cooling failure took the Orbis Cloud offline. Then more.")
    unrelated = Triple(s=iri(E["Ledger"]), p=iri(relation_uri("version")), o=literal("2.1"))
    return assemble([*DEPENDENCIES, OWNED, LEDGER, REPLACED, unrelated], cited=cited, records=[outage],
                    rule_claims=rules, former=former, labels={e: n for n, e in E.items()})


def knowledge() -> list[Triple]:
    """The same current facts as the collection's default graph holds them (labels included), for a fact graph."""
    from tracegraph.base.provenance.vocab import RDFS

    return [*DEPENDENCIES, OWNED, LEDGER, REPLACED, fact("Helios Grid", "mentioned with", "Skyline"),
            fact("Helios Grid", "is the largest customer of", "Corvid Analytics"),
            *(Triple(s=iri(e), p=RDFS.label, o=literal(n)) for n, e in E.items())]
