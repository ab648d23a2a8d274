"""The intent check (RSN-09) with the bundled embedding model: a PR and the work item it implements pass
the default threshold, a PR linked to another item of the same product is flagged, whether the change
is told as a summary or as a diff; and a diff is read for its summary, paths and changed code only."""

from __future__ import annotations

import doctest
from collections.abc import Sequence

import pytest
import tracegraph.base.architecture.intent
from tracegraph.base.architecture.intent import (
    ADVISORY,
    DEFAULT_THRESHOLD,
    MAX_PIECES,
    WINDOW_CHARS,
    NothingToCompare,
    check,
    sentences,
)
from tracegraph.base.llm.local_embed import LocalEmbedder

WEBHOOK_PR = """Add exponential backoff retries for webhook delivery

The webhook dispatcher now retries failed deliveries (HTTP 5xx responses and timeouts) up to five times, \
with jittered exponential backoff starting at one second. Events that still fail after the last attempt are \
published to the webhook-dlq topic instead of being dropped. Adds the webhook_delivery_retries_total metric \
and unit tests for the retry schedule."""

WEBHOOK_ITEM = """PAY-1423: Webhook events are lost when a merchant endpoint is down

When a merchant's webhook endpoint returns an error or times out we drop the event, and merchants miss \
payment notifications. We should retry failed webhook deliveries with exponential backoff, and after the \
final attempt keep the event in a dead-letter queue so support can replay it.

Acceptance criteria:
- failed deliveries are retried at least 5 times with backoff
- exhausted events go to a dead-letter queue
- retries are visible in metrics"""

INVOICE_ITEM = """BILL-310: Invoice totals don't match the ledger

Finance reports that some invoice PDFs show a total one cent different from the amount booked in the \
ledger. It looks like VAT is rounded on each line. Tax should be calculated per rate on the subtotal, and \
the invoice should show the VAT breakdown per rate as required in the EU."""

WEBHOOK_DIFF = """commit 3f9c2a1d8e7b6a5c4d3e2f1a0b9c8d7e6f5a4b3c
Author: Dana Kim <dana@example.com>
Date:   Tue Mar 4 10:12:44 2025 +0100

    Retry webhook deliveries with exponential backoff

diff --git a/services/webhooks/dispatcher.py b/services/webhooks/dispatcher.py
index 1a2b3c4..5d6e7f8 100644
--- a/services/webhooks/dispatcher.py
+++ b/services/webhooks/dispatcher.py
@@ -1,8 +1,12 @@
 import logging
+import random

 from services.webhooks.client import post_event
+from services.webhooks.dlq import publish_dead_letter
+from services.metrics import counter

 log = logging.getLogger(__name__)
+MAX_ATTEMPTS = 5
+retries_total = counter("webhook_delivery_retries_total")
@@ -20,9 +24,20 @@ async def deliver(event, endpoint):
-    response = await post_event(endpoint, event)
-    if response.status >= 500:
-        log.warning("webhook delivery failed, dropping event %s", event.id)
+    for attempt in range(MAX_ATTEMPTS):
+        try:
+            response = await post_event(endpoint, event, timeout=10)
+        except TimeoutError:
+            response = None
+        if response is not None and response.status < 500:
+            return response
+        retries_total.inc()
+        delay = BASE_DELAY_SECONDS * 2 ** attempt
+        await asyncio.sleep(delay + random.uniform(0, delay / 2))
+    log.warning("webhook delivery failed after %d attempts, moving event %s to the dead-letter queue",
+                MAX_ATTEMPTS, event.id)
+    await publish_dead_letter(event, endpoint)
diff --git a/tests/webhooks/test_dispatcher.py b/tests/webhooks/test_dispatcher.py
--- a/tests/webhooks/test_dispatcher.py
+++ b/tests/webhooks/test_dispatcher.py
@@ -40,3 +40,9 @@ def test_delivers_event():
+async def test_retries_with_backoff_then_dead_letters(fake_endpoint, fake_dlq):
+    fake_endpoint.fail_times(5)
+    await deliver(make_event(), fake_endpoint.url)
+    assert fake_dlq.events == [make_event()]
"""


def test_doctests():
    result = doctest.testmod(tracegraph.base.architecture.intent)
    assert result.attempted > 0 and result.failed == 0


# --- with the bundled model ----------------------------------------------------------------------


async def test_a_pr_and_the_item_it_implements_pass(embedder: LocalEmbedder):
    result = await check(WEBHOOK_PR, WEBHOOK_ITEM, embedder.embed, model=embedder.name)
    assert result.similarity >= DEFAULT_THRESHOLD == result.threshold, result
    assert (result.mismatch, result.advisory, result.model) == (False, "", embedder.name)
    assert [m.side for m in result.explanation] == ["change"] * 3 + ["work-item"] * 3
    assert all(m.similarity == round(m.similarity, 4) for m in result.explanation)
    by_side = {side: [m.similarity for m in result.explanation if m.side == side] for side in ("change", "work-item")}
    assert all(s == sorted(s, reverse=True) for s in by_side.values()), "closest first"
    assert set(sentences(WEBHOOK_PR)) >= {m.sentence for m in result.explanation if m.side == "change"}
    assert set(sentences(WEBHOOK_ITEM)) >= {m.nearest for m in result.explanation if m.side == "change"}


async def test_a_pr_linked_to_another_item_of_the_product_is_flagged(embedder: LocalEmbedder):
    result = await check(WEBHOOK_PR, INVOICE_ITEM, embedder.embed, nearest=1)
    assert result.similarity < DEFAULT_THRESHOLD and result.mismatch, result
    assert result.advisory == ADVISORY
    assert [m.side for m in result.explanation] == ["change", "work-item"]


async def test_a_diff_is_compared_by_its_meaning(embedder: LocalEmbedder):
    matching = await check(WEBHOOK_DIFF, WEBHOOK_ITEM, embedder.embed)
    unrelated = await check(WEBHOOK_DIFF, INVOICE_ITEM, embedder.embed)
    assert not matching.mismatch and unrelated.mismatch, (matching.similarity, unrelated.similarity)
    assert matching.similarity > unrelated.similarity + 0.3


async def test_the_threshold_is_the_callers(embedder: LocalEmbedder):
    lenient = await check(WEBHOOK_PR, INVOICE_ITEM, embedder.embed, threshold=-1.0)
    assert (lenient.mismatch, lenient.advisory, lenient.threshold) == (False, "", -1.0)


# --- what the model is given ----------------------------------------------------------------------


def test_a_diff_reads_as_its_summary_paths_and_changed_code():
    pieces = sentences(WEBHOOK_DIFF)
    assert pieces[:2] == ["Retry webhook deliveries with exponential backoff", "file services webhooks dispatcher"]
    text = "\n".join(pieces)
    for gone in ("3f9c2a1", "Dana", "2025", "index", "logging", "import"):  # metadata, context lines, keywords
        assert gone not in text, gone
    assert "publish dead letter" in text and "max attempts" in text  # added lines, identifiers as words
    assert "dropping" in text  # removed lines belong to the change too
    assert "file tests webhooks test dispatcher" in pieces


def test_dashes_inside_a_hunk_are_code_not_a_file_header_and_a_repeated_line_counts_once():
    diff = ("--- a/sql/report.sql\n+++ b/sql/report.sql\n@@ -1,2 +1,3 @@\n--- old report query\n"
            "+-- monthly revenue report\n+-- monthly revenue report\n")
    assert sentences(diff) == ["file sql report", "old report query monthly revenue report"]


def test_a_long_side_keeps_every_word_in_at_most_the_model_window():
    item = " ".join(f"Requirement {n} says the exporter handles case number {n} correctly." for n in range(300))
    pieces = sentences(item)
    assert len(pieces) <= MAX_PIECES and all(len(p) <= WINDOW_CHARS for p in pieces)
    assert " ".join(pieces).split() == item.split()


def test_headings_and_list_marks_are_dropped():
    text = "# Context\nCustomers see timeouts on the orders page.\n\n1. add an index\n2) paginate by keyset"
    assert sentences(text) == ["Context Customers see timeouts on the orders page.", "add an index",
                               "paginate by keyset"]


# --- the arithmetic, with vectors chosen by hand -----------------------------------------------------


class CountingEmbed:
    """Each text's vector from a table: known cosines, and a count of model calls."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table, self.calls = table, 0

    async def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [self.table[t] for t in texts]


async def test_similarity_is_the_cosine_of_the_sides_mean_directions():
    embed = CountingEmbed({"Alpha beta gamma.": [1.0, 0.0], "Delta epsilon zeta.": [0.0, 1.0],
                           "Eta theta iota.": [3.0, 0.0]})  # not unit length: normalised first
    result = await check("Alpha beta gamma. Delta epsilon zeta.", "Eta theta iota.", embed, nearest=5)
    assert embed.calls == 1
    assert result.similarity == 0.7071 and not result.mismatch  # cos 45°
    assert [(m.side, m.sentence, m.nearest, m.similarity) for m in result.explanation] == [
        ("change", "Alpha beta gamma.", "Eta theta iota.", 1.0),
        ("change", "Delta epsilon zeta.", "Eta theta iota.", 0.0),
        ("work-item", "Eta theta iota.", "Alpha beta gamma.", 1.0),
    ]


async def test_a_side_without_words_is_refused():
    with pytest.raises(NothingToCompare, match="work-item has no words"):
        await check("Fix the build.", " \n\t", CountingEmbed({}))
