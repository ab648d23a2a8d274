"""What the librarian refuses, and how the chunker splits, with exact offsets."""

import pytest

from tracegraph.base.documents import DocumentError, check, read_pages
from tracegraph.base.provenance.uris import chunk_uri
from tracegraph.flow.chunker import split

from support.pdf import make_pdf


@pytest.mark.parametrize("content, kind, message", [
    (b"", "text/plain", "empty"),
    (b"   \n ", "text/plain", "no text"),
    (b"\x00\x01\x02binary", "text/plain", "looks binary"),
    (b"\xff\xfe\xfa", "text/plain", "not UTF-8"),
    (b"hello", "image/png", "unsupported document kind"),
    (b"x" * 101, "text/plain", "over the limit of 100"),
    (b"not a pdf", "application/pdf", "does not start with %PDF-"),
    (b"%PDF-1.4 garbage garbage", "application/pdf", "unreadable PDF"),
])
def test_bad_documents_are_refused_with_the_reason(content, kind, message):
    with pytest.raises(DocumentError, match=message):
        check(content, kind, limit=100)


def test_pdf_pages_are_read_in_order():
    pdf = make_pdf(["Helios Grid depends on Corvid Analytics.", "Orbis Systems operates the Orbis Cloud."])
    assert check(pdf, "application/pdf", limit=10_000) == 2
    pages = read_pages(pdf, "application/pdf")
    assert [p.number for p in pages] == [1, 2]
    assert "Corvid Analytics" in pages[0].text and "Orbis Cloud" in pages[1].text


def test_chunks_fit_the_size_overlap_and_point_into_the_text():
    text = " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(200))
    chunks = split(text, 300, 50)
    assert len(chunks) > 10
    for offset, chunk in chunks:
        assert len(chunk) <= 300 and text[offset:offset + len(chunk)] == chunk
    assert any(chunks[i + 1][0] < chunks[i][0] + len(chunks[i][1]) for i in range(len(chunks) - 1)), "overlap"


def test_chunk_ids_are_stable_and_depend_on_the_parameters():
    assert chunk_uri("urn:doc", 1, 2000, 100) == chunk_uri("urn:doc", 1, 2000, 100)
    assert chunk_uri("urn:doc", 1, 2000, 100) != chunk_uri("urn:doc", 1, 1000, 100)
    assert chunk_uri("urn:doc", 1, 2000, 100).startswith("urn:chunk:")
