"""The architecture questions over a collection's graph: ownership (graph edges merged with CODEOWNERS),
dependency trees, institutional memory (decisions, failure patterns, exceptions to policy, memories)
and intent checks.

How it is kept in RDF (tg: = https://trustgraph.ai/ns/, entities https://trustgraph.ai/e/<slug>):

Default graph (knowledge, evidence like any other extracted fact):
- a CODEOWNERS rule, one per non-comment line: `urn:trustgraph:codeowners-rule:<id>` a tg:CodeOwnersRule;
  tg:pathPattern "pattern as written"; tg:lineNumber N; tg:codeOwner <owner entity> (one per owner);
  prov:wasDerivedFrom <document>. Later lines of one file win (compare tg:lineNumber).
- an owner handle: `@org/payments-team` → entity_uri("payments-team") a tg:Team; `@alice` →
  entity_uri("alice") a tg:Person; `alice@example.com` → entity_uri("alice@example.com") a tg:Person;
  each with tg:contactHandle "the handle as written" and rdfs:label (the handle).
- a service's code location: <service entity> tg:codePath "services/skyline/" (from text saying so).
- a memory node `urn:trustgraph:memory:<id>` a tg:Decision | tg:FailurePattern | tg:PolicyException |
  tg:Memory; rdfs:label title; tg:summary text; dc:creator author; dc:date date (YYYY-MM-DD);
  tg:decisionStatus, tg:rationale, tg:consequence, tg:rootCause, tg:impact, tg:actionItem, tg:policy
  (literals, where the document has them); relations to entities: tg:why (a decision about it),
  tg:affected, tg:causedBy, tg:excepts, tg:concerns (a memory or anything else mentioning it).

Source graph (urn:graph:source, extraction provenance, as for chunks): a tg:SourceLine per line or
section the facts came from (`prov:wasDerivedFrom` the document, tg:lineNumber), and a tg:Subgraph
derived from it that `tg:contains` each fact; so removing the document removes them.
"""
