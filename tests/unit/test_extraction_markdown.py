"""Documents as engineers write them: facts from Markdown structure (a heading naming the subject of the
bullets under it, tables with a header, `Key: value` fields and front matter, code spans, Mermaid
diagrams), each placed on the lines it came from. Each case gave nothing on the old extractor."""

from tracegraph.base.extraction import vocabulary as vocab
from tracegraph.base.extraction.blocks import read_blocks
from tracegraph.base.extraction.facts import Relation, placed_facts, relation_triple
from tracegraph.base.extraction.reader import extract, extract_text
from tracegraph.base.extraction.structure import read_structure

SERVICE_README = """---
title: Billing Service
owner: Billing squad
---
# Billing Service

Billing turns usage into invoices.

| Field | Value |
| --- | --- |
| Owning team | Billing squad |
| On-call | @payments-oncall |
| Version | v4.2 |

## Dependencies

- Ledger (for posting invoices)
- `tax-rates`: the rates table
- [Notifier](https://example.org/notifier)

Repo path: `services/billing/`
"""


def relations(text: str, path: str = "services/billing/README.md"):
    return extract_text(text, path, path=path).relations


def triples(text: str, path: str = "services/billing/README.md") -> set[tuple[str, str, str]]:
    return {(r.subject, r.predicate, r.object) for r in relations(text, path)}


def test_a_list_under_a_dependencies_heading_is_what_the_document_subject_depends_on():
    found = triples(SERVICE_README)
    assert {("Billing", "depends on", "Ledger"), ("Billing", "depends on", "tax-rates"),
            ("Billing", "depends on", "Notifier")} <= found


def test_a_heading_names_the_subject_of_the_bullets_under_it():
    found = triples("# Platform\n\n## Orders service\n\n### Dependencies\n\n- Ledger\n- Payments\n")
    assert {("Orders", "depends on", "Ledger"), ("Orders", "depends on", "Payments")} <= found
    nested = triples("# Billing\n\n- Dependencies:\n  - Ledger\n  - Tax\n")
    assert {("Billing", "depends on", "Ledger"), ("Billing", "depends on", "Tax")} <= nested


def test_fields_tables_and_front_matter_state_ownership_version_and_paths():
    found = {(r.subject, r.predicate, r.object, r.value) for r in relations(SERVICE_README)}
    assert ("Billing", vocab.OWNED_BY, "Billing squad", False) in found  # front matter and table alike
    assert ("Billing", vocab.ON_CALL, "payments-oncall", False) in found
    assert ("Billing", vocab.VERSION, "4.2", True) in found
    assert ("Billing", vocab.CODE_PATH, "services/billing/", True) in found


def test_a_table_with_a_subject_column_states_each_row_of_its_own_subject():
    table = """# Services

| Service | Owner | Depends on | Description |
| --- | --- | --- | --- |
| Orders | Orders team | Ledger, Payments | Stores orders in Postgres. |
| Ledger | Finance team | | Publishes entries to Kafka. |
"""
    found = triples(table, "docs/services.md")
    assert {("Orders", "is owned by", "Orders team"), ("Orders", "depends on", "Ledger"),
            ("Orders", "depends on", "Payments"), ("Ledger", "is owned by", "Finance team"),
            ("Orders", "writes to", "Postgres"), ("Ledger", "publishes to", "Kafka")} <= found


def test_a_mermaid_flowchart_is_calls_and_a_drawn_database_is_used():
    diagram = """# Architecture

```mermaid
graph TD
  checkout(Checkout) -->|gRPC| cart(Cart)
  cart --> cache[(Cache<br/>(Valkey))]
  queue[(queue (Kafka))] --> accounting(Accounting)
```
"""
    found = triples(diagram, "docs/architecture.md")
    assert {("Checkout", "calls", "Cart"), ("Cart", "uses", "Valkey"),
            ("Accounting", "consumes from", "Kafka")} <= found


def test_a_code_span_names_a_service_written_in_lower_case():
    found = triples("# Shipping Service\n\nThe Shipping service queries `quote` for price quotes.\n",
                    "src/shipping/README.md")
    assert ("Shipping", "calls", "quote") in found


def test_headings_and_whole_sentences_are_never_objects():
    text = "# ADR 7: Use Kafka\n\n## Consequences\n\nHelios Grid restored the line within two days, and the board " \
           "reviewed the outage.\n"
    for r in relations(text, "adr/0007.md"):
        assert r.object not in ("Consequences", "ADR 7: Use Kafka") and len(r.object.split()) <= 6


def test_every_fact_is_placed_on_the_lines_it_came_from():
    found = extract_text(SERVICE_README, "services/billing/README.md", path="services/billing/README.md")
    where = placed_facts(found)
    lines = {(r.subject, r.predicate, r.object): where[relation_triple(r)] for r in found.relations}
    assert lines[("Billing", "depends on", "Ledger")] == (17, 17)
    assert lines[("Billing", "version", "4.2")] == (13, 13)
    prose = extract_text("# Ledger\n\nLedger keeps the books\nfor Billing. It stores its data\nin PostgreSQL.\n",
                         "ledger.md", path="ledger.md")
    [stored] = [r for r in prose.relations if r.object == "PostgreSQL"]
    assert stored.lines == (4, 5)  # the sentence's own lines, not the paragraph's


def test_blocks_carry_their_headings_header_and_lines():
    blocks = read_blocks(SERVICE_README, markdown=True)
    row = next(b for b in blocks if b.kind == "row" and b.cells[0] == "Version")
    assert row.header == ("Field", "Value") and row.first == 13 and row.headings == ("Billing Service",)
    item = next(b for b in blocks if b.kind == "item" and b.text.startswith("Ledger"))
    assert item.headings == ("Billing Service", "Dependencies") and item.first == 17
    front = next(b for b in blocks if b.kind == "field" and b.key == "owner")
    assert front.text == "Billing squad" and front.first == 3


def test_plain_text_is_paragraphs_and_fields():
    blocks = read_blocks("Owner: Ana Ruiz\nStatus: active\n\nLedger keeps\nthe books.\n", markdown=False)
    assert [(b.kind, b.first, b.last) for b in blocks] == [("field", 1, 1), ("field", 2, 2), ("paragraph", 4, 5)]
    assert blocks[2].line_at(blocks[2].text.index("the")) == 5
    assert Relation("Ledger", "is owned by", "Ana Ruiz") in extract_text(
        "Owner: Ana Ruiz\n\nLedger keeps the books.\n", "Ledger", markdown=False).relations


def test_a_paragraph_longer_than_a_chunk_is_read_by_each_chunk_it_fills():
    """A passage written as one long line: each chunk states the facts of its own sentences (and names their
    entities), and "he" in the second chunk is still the person the first one named."""
    text = ("Emil Fischer was a cartographer. " + "He drew maps of the valley for many years. " * 20
            + "He moved to Durango in 1880.")
    starts = [0, 600]
    structure = read_structure(text, "text/plain", title="Emil Fischer", path="", starts=starts)
    (_, first), (_, second) = structure.chunks
    assert [b.part for b in first] == [(0, 600)] and [b.part for b in second] == [(600, len(text))]
    early, late = (extract(blocks, structure.context) for blocks in (first, second))
    assert Relation("Emil Fischer", "moved to", "Durango") in late.relations
    assert Relation("Emil Fischer", "moved to", "Durango") not in early.relations
    assert "Durango" in late.definitions and "Durango" not in early.definitions
