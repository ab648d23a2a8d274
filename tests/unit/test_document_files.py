"""Which files `tg-load-text DIR… FILE…` takes, the path each is stored under (its identity in the library),
and its kind; bad input is refused in one line before anything is loaded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tracegraph.base.documents import PDF, TEXT_KINDS
from tracegraph.base.errors import ConfigError
from tracegraph.cli.document_files import declared_kind, kind_from_name, path_of, select

PROG = "tg-load-text"


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tree(tmp_path / "repo", {
        "README.md": "# Repo\n",
        "services/billing/README.md": "# Billing\n",
        "services/billing/openapi.yaml": "openapi: 3.1.0\n",
        "services/billing/views/invoice.html.md.erb": "# Invoice\n",
        "services/billing/logo.png": "not really a png",
        "services/billing/empty.md": "",
        "docs/guide.rst": "Guide\n=====\n",
        "CODEOWNERS": "* @team\n",
        ".github/CODEOWNERS": "/services/ @billing\n",
        ".github/workflows/ci.yml": "on: push\n",
        ".git/config": "[core]\n",
        ".git/description.txt": "hidden\n",
        ".env.md": "# hidden file\n",
        "Makefile": "all:\n",
    })


def test_a_folder_is_walked_with_paths_relative_to_it_hidden_entries_skipped(repo):
    selection = select([repo], TEXT_KINDS, PROG)
    assert [(f.path, f.kind) for f in selection.files] == [
        ("CODEOWNERS", "text/x-codeowners"),
        ("README.md", "text/markdown"),
        (".github/CODEOWNERS", "text/x-codeowners"),  # where GitHub looks for it, though the folder is hidden
        ("docs/guide.rst", "text/plain"),
        ("services/billing/README.md", "text/markdown"),
        ("services/billing/openapi.yaml", "text/plain"),
        ("services/billing/views/invoice.html.md.erb", "text/markdown"),
    ]
    assert all(f.file == repo / f.path for f in selection.files)
    assert selection.skipped == ["Makefile", "services/billing/empty.md (empty)", "services/billing/logo.png"]
    assert selection.skipped_line(PROG) == ("skipped 3 file(s) tg-load-text cannot take: Makefile, "
                                            "services/billing/empty.md (empty), services/billing/logo.png")


def test_a_subfolder_names_its_files_relative_to_itself_and_mixes_with_files(repo, monkeypatch):
    monkeypatch.chdir(repo)
    selection = select([Path("services"), Path("docs/guide.rst"), repo / "README.md"], TEXT_KINDS, PROG)
    assert [f.path for f in selection.files] == [
        "billing/README.md", "billing/openapi.yaml", "billing/views/invoice.html.md.erb",
        "docs/guide.rst",  # a relative FILE: the path as given
        "README.md"]  # an absolute FILE: its name


def test_the_same_file_twice_is_loaded_once_but_two_files_with_one_path_are_refused(repo):
    assert len(select([repo / "README.md", repo / "README.md"], TEXT_KINDS, PROG).files) == 1
    with pytest.raises(ConfigError, match=r"would both be stored as 'README.md'.*--path"):
        select([repo / "README.md", repo / "services/billing/README.md"], TEXT_KINDS, PROG)


def test_path_names_a_single_file(repo):
    (chosen,) = select([repo / "README.md"], TEXT_KINDS, PROG, path="./services\\repo/README.md").files
    assert chosen.path == "services/repo/README.md"
    with pytest.raises(ConfigError, match=r"^--path names the path of one file; .*repo is a directory"):
        select([repo], TEXT_KINDS, PROG, path="x.md")
    with pytest.raises(ConfigError, match=r"^--path names the path of one file; 2 were given"):
        select([repo / "README.md", repo / "CODEOWNERS"], TEXT_KINDS, PROG, path="x.md")
    with pytest.raises(ConfigError, match=r"--path '  ' is empty"):
        select([repo / "README.md"], TEXT_KINDS, PROG, path="  ")


def test_folders_with_nothing_to_load_and_missing_or_unreadable_files_are_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"empty: no file tg-load-text can take in this folder"):
        select([tmp_path / "empty"], TEXT_KINDS, PROG)
    images = tree(tmp_path / "images", {"a.png": "x", ".hidden.md": "# x\n"})
    with pytest.raises(ConfigError, match=r"images: no file .* in this folder .*; 1 other file\(s\) in it$"):
        select([images], TEXT_KINDS, PROG)
    with pytest.raises(ConfigError, match=r"^cannot read .*missing\.md: No such file or directory$"):
        select([tmp_path / "missing.md"], TEXT_KINDS, PROG)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "gone.md").symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(ConfigError, match=r"^cannot read .*gone\.md: No such file or directory$"):
        select([tmp_path / "broken"], TEXT_KINDS, PROG)
    with pytest.raises(ConfigError, match=r"a\.png: tg-load-text takes .* files, not image/png; declare it with --kind$"):
        select([images / "a.png"], TEXT_KINDS, PROG)
    odd = tree(tmp_path, {"notes.xyzzy": "x"}) / "notes.xyzzy"
    with pytest.raises(ConfigError, match=r"notes\.xyzzy: tg-load-text takes .* files, and cannot tell this one's kind"):
        select([odd], TEXT_KINDS, PROG)
    pdf = tree(tmp_path, {"paper.pdf": "%PDF-"})
    with pytest.raises(ConfigError, match=r"paper\.pdf: tg-load-text takes .* files, not application/pdf"):
        select([pdf / "paper.pdf"], TEXT_KINDS, PROG)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_refused(tmp_path):
    secret = tree(tmp_path, {"secret.md": "# s\n"}) / "secret.md"
    secret.chmod(0)
    with pytest.raises(ConfigError, match=r"^cannot read .*secret\.md: Permission denied$"):
        select([tmp_path], TEXT_KINDS, PROG)


def test_a_pdf_load_walks_for_pdfs_only(tmp_path):
    docs = tree(tmp_path / "docs", {"a/spec.pdf": "%PDF-1.4", "notes.md": "# n\n"})
    selection = select([docs], {PDF}, "tg-load-pdf")
    assert [(f.path, f.kind) for f in selection.files] == [("a/spec.pdf", PDF)]
    assert selection.skipped == ["notes.md"]


@pytest.mark.parametrize("name, kind", [
    ("README.md", "text/markdown"), ("notes.MARKDOWN", "text/markdown"), ("x.html.md.erb", "text/markdown"),
    ("v1.2.md", "text/markdown"), ("values.yaml", "text/plain"), ("ci.YML", "text/plain"),
    ("a.txt", "text/plain"), ("index.rst", "text/plain"), ("guide.adoc", "text/plain"),
    ("package.json", "text/plain"), ("pyproject.toml", "text/plain"), ("setup.cfg", "text/plain"),
    ("tox.ini", "text/plain"), ("build.log", "text/plain"), ("CODEOWNERS", "text/x-codeowners"),
    ("paper.pdf", PDF), ("logo.png", None), ("Makefile", None), ("main.c", None), ("codeowners", None),
    ("md", None), ("README.md.png", "text/markdown"),
])
def test_kinds_are_told_from_the_name(name, kind):
    assert kind_from_name(name) == kind


def test_a_named_file_is_stored_under_its_path_as_given_or_its_name():
    assert path_of(Path("services/billing/README.md")) == "services/billing/README.md"
    assert path_of(Path("./docs//guide.md")) == "docs/guide.md"
    assert path_of(Path("/srv/repo/services/billing/README.md")) == "README.md"


def test_help_explains_paths_with_an_example(capsys):
    from tracegraph.cli.load_documents import main_text

    with pytest.raises(SystemExit) as exit:
        main_text(["--help"])
    shown = capsys.readouterr().out
    assert exit.value.code == 0
    assert "Each document is identified by its path" in shown and "replaced <old id>" in shown
    assert "tg-load-text repo/services     # ... as billing/README.md" in shown


def test_a_declared_kind_is_given_full_or_short_and_a_bad_one_is_one_line():
    assert declared_kind("adr", TEXT_KINDS) == "text/x-adr"
    assert declared_kind("PostMortem", TEXT_KINDS) == "text/x-postmortem"
    assert declared_kind("text/x-review-comments", TEXT_KINDS) == "text/x-review-comments"
    with pytest.raises(ConfigError, match=r"^--kind 'memo' is not a kind this command takes; give one of adr, "
                                          r"codeowners, markdown, plain, postmortem, review-comments \(or in full: "):
        declared_kind("memo", TEXT_KINDS)
    with pytest.raises(ConfigError, match="is not a kind"):
        declared_kind("pdf", TEXT_KINDS)


def test_a_declared_kind_lets_a_nameless_file_in_and_applies_to_every_file(repo, tmp_path):
    odd = tree(tmp_path, {"outage.bin": "Summary\n"}) / "outage.bin"
    with pytest.raises(ConfigError, match=r"outage\.bin: tg-load-text takes .*; declare it with --kind$"):
        select([odd], TEXT_KINDS, PROG)
    assert [(f.path, f.kind) for f in select([odd], TEXT_KINDS, PROG, declared="text/x-postmortem").files] == [
        ("outage.bin", "text/x-postmortem")]
    walked = select([repo / "services"], TEXT_KINDS, PROG, declared="text/x-adr")
    assert {f.kind for f in walked.files} == {"text/x-adr"}
    assert walked.skipped == select([repo / "services"], TEXT_KINDS, PROG).skipped  # the walk takes the same files
