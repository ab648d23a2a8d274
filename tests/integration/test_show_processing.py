"""`tg-show-processing` on an in-process stack: documents loaded with a bounded number in flight are
reported pending or extracted, the flow's stage queues are listed with counts the bus gave, and once
everything has settled the report ends with "nothing pending"."""

from __future__ import annotations

import asyncio
import json

import pytest

from support.ingest import ingest_stack
from support.procs import tg_async

pytestmark = pytest.mark.timeout(300)

TEXTS = {"helios.md": "Helios Grid depends on Corvid Analytics for forecasting.",
         "orbis.md": "Orbis Systems runs the Orbis Cloud platform in Lisbon.",
         "tern.md": "Tern Labs builds the Tern compiler used by Helios Grid."}


async def test_show_processing_reports_documents_then_nothing_pending_once_settled(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in TEXTS.items():
        (docs / name).write_text(text)
    async with ingest_stack(tmp_path / "data") as (api, _):
        code, out, err = await tg_async("tg-load-text", "-u", api.url, str(docs), "--in-flight", "2")
        assert code == 0, (out, err)
        code, out, err = await tg_async("tg-show-processing", "-u", api.url, "--json")
        assert code == 0, (out, err)
        report = json.loads(out)
        [collection] = report["collections"]
        assert collection["collection"] == "default" and collection["submitted"] == 3
        assert collection["extracted"] + collection["pending"] + collection["gave-up"] == 3  # pending or done
        stages = {(stage["queue"], stage["processor"]) for stage in report["stages"]}
        assert ("chunk-load", "kg-extract") in stages and ("triples-store", "triples") in stages, stages
        assert all(isinstance(stage["waiting"], int) for stage in report["stages"])  # the in-process bus counts

        code, out, err = await tg_async("tg-load-text", "-u", api.url, str(docs / "helios.md"), "--wait",
                                        "--timeout", "120")  # the same content again: settles it, adds nothing
        assert code == 0, (out, err)
        for _ in range(120):  # derived structures may still be catching up once extraction is done
            code, out, err = await tg_async("tg-show-processing", "-u", api.url)
            if out.rstrip().endswith("nothing pending"):
                break
            await asyncio.sleep(0.5)
    assert code == 0, (out, err)
    assert out.rstrip().endswith("nothing pending"), out
    assert "default     3          3          0        0" in out, out
