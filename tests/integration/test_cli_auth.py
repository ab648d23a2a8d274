"""Every `tg-*` client command through a gateway that requires a token: refused in one line without it,
working with `--token` or `TG_TOKEN`."""

from __future__ import annotations

import re

import pytest

from support.ingest import CORPUS
from support.pdf import make_pdf
from support.procs import launched, tg

pytestmark = pytest.mark.timeout(400)

SECRET = "cli-test-secret"


def test_every_command_needs_and_uses_the_token(tmp_path):
    turtle = tmp_path / "extra.ttl"
    turtle.write_text("@prefix ex: <http://example.org/> .\nex:a ex:knows ex:b .\n")
    pdf = tmp_path / "note.pdf"
    pdf.write_bytes(make_pdf(["Orbis Systems builds turbines."]))
    with launched(tmp_path / "data", "--gateway-host", "0.0.0.0", env={"TG_GATEWAY_SECRET": SECRET},
                  token=SECRET) as url:
        u = ("-u", url)
        by_env = {"TG_TOKEN": SECRET}

        def ok(*command: str) -> str:
            result = tg(*command, "--token", SECRET, timeout=120)
            assert result.returncode == 0, f"{command[0]} failed: {result.stderr}"
            return result.stdout

        loaded = ok("tg-load-text", *u, str(CORPUS / "helios-grid.md"), "--wait")
        doc = re.search(r"(urn:trustgraph:doc:\w+)", loaded).group(1)
        answer = ok("tg-invoke-graph-rag", *u, "-q", "What does Helios Grid depend on?", "--explainable")
        question = re.search(r"^\[question\] (\S+)", answer, re.M).group(1)
        added = re.search(r"(urn:trustgraph:doc:\w+)", ok("tg-add-library-document", *u, str(CORPUS / "orbis-systems.md")))
        commands = [
            ("tg-show-flow-blueprints", *u),
            ("tg-show-flows", *u),
            ("tg-show-config", *u),
            ("tg-start-flow", *u, "-n", "default", "-i", "second"),
            ("tg-stop-flow", *u, "-i", "second"),
            ("tg-show-library-documents", *u),
            ("tg-query-triples", *u, "-s", "https://trustgraph.ai/e/helios-grid"),
            ("tg-show-graph", *u, "-l", "5"),
            ("tg-query-sparql", *u, "-q", "ASK { ?s ?p ?o }"),
            ("tg-load-turtle", *u, str(turtle)),
            ("tg-load-pdf", *u, str(pdf)),
            ("tg-invoke-graph-rag", *u, "-q", "Who runs Helios Grid?"),
            ("tg-invoke-document-rag", *u, "-q", "Who runs Helios Grid?"),
            ("tg-invoke-agent", *u, "-q", "Who runs Helios Grid?"),
            ("tg-list-explain-traces", *u),
            ("tg-show-explain-trace", *u, question),
            ("tg-export-explain-trace", *u, question, "--format", "nquads"),
            ("tg-remove-library-document", *u, "--id", added.group(1)),
        ]
        for command in commands:
            refused = tg(*command)
            assert refused.returncode == 1, f"{command[0]} ran without a token"
            assert refused.stderr.count("\n") == 1 and "requires a token (--token / TG_TOKEN)" in refused.stderr, \
                refused.stderr
            wrong = tg(*command, env={"TG_TOKEN": "nope"})
            assert wrong.returncode == 1 and "token given was not accepted" in wrong.stderr, wrong.stderr
            accepted = tg(*command, env=by_env, timeout=120)
            assert accepted.returncode == 0, f"{command[0]} failed with TG_TOKEN: {accepted.stderr}"
        assert doc in ok("tg-show-library-documents", *u)
