"""What the librarian refuses, and how the chunker splits, with exact offsets."""

import io

import pytest

from tracegraph.base.documents import DocumentError, check, read_pages
from tracegraph.base.provenance.uris import chunk_uri
from tracegraph.flow.chunker import split


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


def make_pdf(pages: list[str]) -> bytes:
    """A small real PDF with one line of text per page (hand-built: pypdf writes no text)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", None, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for text in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
        content_id = len(objects)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>")
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out, offsets = io.BytesIO(), []
    out.write(b"%PDF-1.4\n")
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode())
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


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
