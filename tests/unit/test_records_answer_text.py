"""The words of an ownership or why answer asked through search: owners in time with dated sources and
the statement that replaced an earlier one; a decision's why with its lines and the option it chose."""

from __future__ import annotations

from tracegraph.flow.search.architecture_answers import _cited, _owner_line, _why
from tracegraph.schemas.architecture import MemoryItem, Owner, Reason, Source

LATER = Source(document="urn:doc:r25", title="review-2025.md", line=5, date="2025-09-15")


def test_an_earlier_owner_reads_with_its_period_and_what_replaced_it():
    earlier = Owner(entity="e:guild", label="Forecasting Guild", handles=["@corvid/forecasting-guild"],
                    relations=["is owned by", "CODEOWNERS"], standing="earlier", since="2024-03-04", until="2025-09-15",
                    sources=[Source(document="urn:doc:r24", title="review-2024.md", line=5, date="2024-03-04",
                                    superseded_by=LATER),
                             Source(document="urn:doc:co", title="CODEOWNERS", line=9, added="2026-11-27")])
    assert _owner_line(earlier) == (
        "Forecasting Guild (@corvid/forecasting-guild) 2024-03-04 – 2025-09-15 [is owned by, CODEOWNERS; "
        "review-2024.md line 5 (2024-03-04, superseded on 2025-09-15 by review-2025.md), "
        "CODEOWNERS line 9 (undated, added 2026-11-27)]")
    current = Owner(entity="e:grid", label="Grid Analytics", relations=["is owned by"], since="2025-09-15",
                    sources=[LATER])
    assert _owner_line(current) == "Grid Analytics since 2025-09-15 [is owned by; review-2025.md line 5 (2025-09-15)]"
    assert _cited(Source(document="urn:doc:x")) == "urn:doc:x"


def test_a_decision_reads_with_its_lines_and_its_choice():
    item = MemoryItem(node="n", kind="decision", title="ADR 12", why="One outage stopped every forecast.",
                      source=Source(document="d"), reasons=[
                          Reason(part="context", text="One outage stopped every forecast.", line=9, last_line=14),
                          Reason(part="option", text="A second region on the Orbis Cloud: cheapest", line=18),
                          Reason(part="option", text="A standby region on a second cloud provider: chosen.", line=22,
                                 chosen=True)])
    assert _why("Why", item) == (" Why (lines 9–14): One outage stopped every forecast. Chosen (line 22): A standby "
                                 "region on a second cloud provider, over A second region on the Orbis Cloud.")
    unplaced = MemoryItem(node="n", kind="exception", title="x", why="single-cloud policy", source=Source(document="d"))
    assert _why("Policy", unplaced) == " Policy: single-cloud policy"
    assert _why("Why", MemoryItem(node="n", kind="memory", title="x", source=Source(document="d"))) == ""
