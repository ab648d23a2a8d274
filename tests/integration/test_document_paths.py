"""A document's identity is its path: loading a changed file at a path already stored replaces the older
document (its facts retracted in the flow, kept by the history), identical content changes nothing, and
`tg-load-text DIR` stores each file under its path relative to DIR."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from tracegraph.base.provenance.uris import entity_uri, relation_uri
from tracegraph.cli.api import Api
from tracegraph.cli.library_upload import process, store_document, wait_for_extraction
from tracegraph.schemas.dates import now

from support.ingest import CORPUS, ingest_stack
from support.procs import tg_async

pytestmark = pytest.mark.timeout(300)

SKYLINE, OWNED_BY = entity_uri("Skyline"), relation_uri("is owned by")
GUILD = entity_uri("Forecasting Guild")
PATH = "reviews/skyline.md"


async def owners(api: Api, **when: str) -> set[str]:
    reply = await api.flow_service("default", "temporal", {"subject": SKYLINE, **when})
    return {f["o"]["i"] for f in reply["facts"] if f["p"]["i"] == OWNED_BY}


async def listed(api: Api) -> list[tuple[str, str, str]]:
    documents = (await api.request("librarian", {"operation": "list-documents"}))["document-metadatas"]
    return [(d["id"], d["path"], d["title"]) for d in documents]


async def test_a_changed_file_at_a_stored_path_replaces_the_older_document(tmp_path):
    file = tmp_path / "skyline.md"
    async with ingest_stack(tmp_path / "data") as (api, _):
        file.write_bytes((CORPUS / "skyline-review-2024.md").read_bytes())
        first = await store_document(api, file, collection="default", path=PATH)
        old = first.meta["id"]
        assert first.replaced == [] and first.meta["title"] == PATH  # no title given: the path is the title
        await process(api, old, "default", "default")
        await wait_for_extraction(api, "default", [old], "default", 120)
        assert await owners(api) == {GUILD}

        again = await store_document(api, file, collection="default", path=PATH)  # identical content: nothing
        assert (again.meta["id"], again.replaced) == (old, [])
        assert await listed(api) == [(old, PATH, PATH)]

        await asyncio.sleep(1.1)  # instants are whole seconds: "before the replacement" is a second before it
        before = now()
        await asyncio.sleep(1.1)
        file.write_bytes((CORPUS / "skyline-review-2025.md").read_bytes())
        second = await store_document(api, file, collection="default", path=PATH)
        new = second.meta["id"]
        assert new != old and second.replaced == [old]
        assert await listed(api) == [(new, PATH, PATH)]  # the older document is gone, the new one is there
        # The older document's facts are retracted in the flow; the history still knows them.
        assert await owners(api, at="2024-06-01") == set()
        assert await owners(api, at="2024-06-01", known=before) == {GUILD}

        await process(api, new, "default", "default")
        await wait_for_extraction(api, "default", [new], "default", 120)
        current = await owners(api)
        assert current and GUILD not in current  # the 2025 review's owner (however the extractor names it)
        documents = await api.flow_service("default", "sparql", {"query": (
            "SELECT DISTINCT ?d ?title WHERE { ?d a <https://trustgraph.ai/ns/Document> ; "
            "<http://purl.org/dc/elements/1.1/title> ?title }")})
        assert [(b["d"]["i"], b["title"]["v"]) for b in documents["bindings"]] == [(new, PATH)]

        # The same content at another path is another document, replaced on its own.
        elsewhere = await store_document(api, file, collection="default", path="archive/skyline.md")
        assert elsewhere.meta["id"] not in (old, new) and elsewhere.replaced == []
        assert {d[1] for d in await listed(api)} == {PATH, "archive/skyline.md"}


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


async def test_load_text_of_a_folder_stores_paths_and_a_changed_file_replaces_its_document(tmp_path):
    repo = tree(tmp_path / "repo", {
        "services/billing/README.md": "# Billing\n\nBilling depends on Ledger.\n",
        "services/ledger/README.md": "# Ledger\n\nLedger is owned by the Payments team.\n",
        "services/billing/logo.png": "png",
        ".git/HEAD": "ref: refs/heads/main\n",
    })
    async with ingest_stack(tmp_path / "data") as (api, _):
        u = ("-u", api.url)
        code, out, err = await tg_async("tg-load-text", *u, str(repo / "services"), "--wait")
        assert code == 0, err
        assert "skipped 1 file(s) tg-load-text cannot take: billing/logo.png" in out
        loaded = dict(re.findall(r"^(\S+): (urn:trustgraph:doc:\w+) ", out, re.M))
        assert set(loaded) == {"billing/README.md", "ledger/README.md"}
        assert "replaced" not in out

        code, shown, err = await tg_async("tg-show-library-documents", *u)
        assert code == 0, err
        assert re.search(r"^id\s+kind\s+bytes\s+path\s+collection$", shown, re.M)
        assert re.search(rf"^{loaded['billing/README.md']}\s+text/markdown\s+\d+\s+billing/README\.md\s+default$",
                         shown, re.M)

        (repo / "services/billing/README.md").write_text("# Billing\n\nBilling depends on Vault.\n")
        code, out, err = await tg_async("tg-load-text", *u, str(repo / "services"))
        assert code == 0, err
        again = dict(re.findall(r"^(\S+): (urn:trustgraph:doc:\w+) ", out, re.M))
        assert again["ledger/README.md"] == loaded["ledger/README.md"]  # unchanged: the same document
        assert again["billing/README.md"] != loaded["billing/README.md"]
        assert re.search(rf"^billing/README\.md: {again['billing/README.md']} .*; replaced "
                         rf"{loaded['billing/README.md']}$", out, re.M)
        assert out.count("replaced") == 1
        documents = {d[1]: d[0] for d in await listed(api)}
        assert documents == again

        code, out, err = await tg_async("tg-load-text", *u, str(repo / "services"), "--path", "x.md")
        assert code == 1 and len(err.strip().splitlines()) == 1 and "--path names the path of one file" in err
        code, out, err = await tg_async("tg-load-text", *u, str(tmp_path / "nowhere"))
        assert code == 1 and err.strip() == f"tg-load-text: error: cannot read {tmp_path / 'nowhere'}: " \
                                             "No such file or directory"
        (tmp_path / "empty").mkdir()
        code, out, err = await tg_async("tg-load-text", *u, str(tmp_path / "empty"))
        assert code == 1 and len(err.strip().splitlines()) == 1 and "no file tg-load-text can take" in err

        # tg-add-library-document: --path names where a file from elsewhere belongs.
        draft = tree(tmp_path, {"draft.md": "# Ledger\n\nLedger is owned by the Treasury team.\n"}) / "draft.md"
        code, out, err = await tg_async("tg-add-library-document", *u, str(draft), "--path", "ledger/README.md",
                                        "--title", "Ledger")
        assert code == 0, err
        assert re.fullmatch(rf"urn:trustgraph:doc:\w+  text/markdown  \d+ bytes  ledger/README\.md  \"Ledger\"; "
                            rf"replaced {again['ledger/README.md']}\n", out), out
