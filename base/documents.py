"""What the librarian accepts: text, Markdown and PDF, and the architecture kinds (CODEOWNERS, ADRs,
post-mortems, review comments: text read by their own extraction rules), checked before anything is stored."""

from __future__ import annotations

import io
from dataclasses import dataclass

from tracegraph.base.errors import ConfigError

CODEOWNERS = "text/x-codeowners"
# Markdown whose kind the user declares; a Markdown document with their headings is recognised without it.
ARCHITECTURE_MARKDOWN = {"text/x-adr", "text/x-postmortem", "text/x-review-comments"}
MARKDOWN_KINDS = {"text/markdown"} | ARCHITECTURE_MARKDOWN
TEXT_KINDS = {"text/plain", CODEOWNERS} | MARKDOWN_KINDS
PDF = "application/pdf"
KINDS = TEXT_KINDS | {PDF}


class DocumentError(ConfigError):
    """A document that cannot be taken: empty, too big, not what its kind says, or unreadable."""


@dataclass(frozen=True, slots=True)
class Page:
    number: int  # 1-based; text documents are one page
    text: str


def check(content: bytes, kind: str, limit: int) -> int:
    """Validate a document; returns its page count. Raises DocumentError saying what is wrong."""
    if kind not in KINDS:
        raise DocumentError(f"unsupported document kind {kind!r}; supported: {', '.join(sorted(KINDS))}")
    if not content:
        raise DocumentError("document is empty")
    if len(content) > limit:
        raise DocumentError(f"document is {len(content):,} bytes, over the limit of {limit:,} (TG_MAX_DOCUMENT_BYTES)")
    pages = read_pages(content, kind)
    if not any(page.text.strip() for page in pages):
        raise DocumentError("document has no text" + (" (a scanned PDF needs OCR first)" if kind == PDF else ""))
    return len(pages)


def read_pages(content: bytes, kind: str) -> list[Page]:
    """The document's text, page by page (one page for text kinds)."""
    if kind == PDF:
        return _pdf_pages(content)
    if b"\x00" in content[:65536]:
        raise DocumentError(f"document declared {kind} contains NUL bytes: it looks binary, not text")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"document declared {kind} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    return [Page(1, text)]


def _pdf_pages(content: bytes) -> list[Page]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    if not content.startswith(b"%PDF-"):
        raise DocumentError("document declared application/pdf does not start with %PDF-")
    try:
        reader = PdfReader(io.BytesIO(content))
        return [Page(i + 1, page.extract_text() or "") for i, page in enumerate(reader.pages)]
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise DocumentError(f"unreadable PDF: {exc}") from None
