"""The offline extractor on encyclopedic prose (plain text with a title, as the public multi-hop passages
are): the title as the entity its passage is about, however the text names it; relations read from the
parse; no fragments as entities or predicates. Each case comes from real Wikipedia passages."""

import doctest

import tracegraph.base.extraction.facts
from tracegraph.base.bus.inproc import InprocBackend
from tracegraph.base.extraction.facts import Relation, normalise_label
from tracegraph.base.extraction.reader import extract_text
from tracegraph.base.settings import RuntimeSettings
from tracegraph.base.specs import Parameter
from tracegraph.flow.kg_extract.processor import KnowledgeExtractor
from tracegraph.schemas.ingest import Metadata, TextChunk
from tracegraph.schemas.triples import TriplesQueryResponse

B_BOY = ("B Boy is a song by the American hip hop group Lost Boyz. "
         "It was released in 1999 by Ruffhouse Records.")


def extract(text: str, title: str = ""):
    return extract_text(text, title, markdown=False)


def predicates(found):
    return {r.predicate for r in found.relations}


# -- the title -------------------------------------------------------------------------------------------

def test_title_keeps_its_qualifier_and_is_named_without_it():
    found = extract(B_BOY, title="B Boy (song)")
    assert found.definitions["B Boy (song)"].startswith("a song by")
    assert "B Boy" not in found.definitions
    assert Relation("B Boy (song)", "is a", "song") in found.relations
    assert Relation("B Boy (song)", "is a song by", "Lost Boyz") in found.relations


def test_sentence_opening_with_a_pronoun_is_about_the_title():
    found = extract(B_BOY, title="B Boy (song)")
    assert Relation("B Boy (song)", "was released by", "Ruffhouse Records") in found.relations


def test_the_title_after_the_and_by_its_kind():
    found = extract("The B Boy was the group's first single. The song was produced by Mr. Sexxx.",
                    title="B Boy (song)")
    assert Relation("B Boy (song)", "was produced by", "Mr. Sexxx") in found.relations


def test_a_title_never_named_gets_the_first_sentence_as_context_not_as_a_fact():
    found = extract("The play draws on hundreds of interviews. It has three acts.", title="The Laramie Project")
    assert found.definitions == {"The Laramie Project": ""} and found.relations == []
    assert found.contexts["The Laramie Project"] == "The play draws on hundreds of interviews."


def test_a_longer_form_of_the_title_is_the_title():
    person = extract("Christopher Edward Nolan (born 30 July 1970) is an English-American film director. "
                     "He was born in London.", title="Christopher Nolan")
    assert Relation("Christopher Nolan", "was born in", "London") in person.relations
    assert "Christopher Edward Nolan" not in person.definitions


def test_a_clause_on_the_kind_is_about_the_subject():
    film = extract("Summer Storm is a 1969 British comedy film directed by Samuel Gallu.", title="Summer Storm")
    assert Relation("Summer Storm", "directed by", "Samuel Gallu") in film.relations
    journal = extract("The Journal of Mathematical Physics is a peer-reviewed journal published monthly by the "
                      "American Institute of Physics.", title="Journal of Mathematical Physics")
    assert Relation("Journal of Mathematical Physics", "published by", "American Institute of Physics") \
        in journal.relations
    assert Relation("Journal of Mathematical Physics", "is a", "peer-reviewed journal") in journal.relations


def test_no_title_no_title_entity():
    assert list(extract("Helios Grid depends on Corvid Analytics.").definitions) == \
        ["Helios Grid", "Corvid Analytics"]


# -- no fragments ---------------------------------------------------------------------------------------

def test_is_a_ends_in_a_noun_not_an_adjective():
    found = extract("Git is a fast, scalable, distributed revision control system with an unusually "
                    "rich command set.")
    assert Relation("Git", "is a", "fast") not in found.relations
    assert Relation("Git", "is a", "revision control system") in found.relations


def test_shouted_ordinary_words_and_possessive_predicates():
    found = extract("Clients MAY also get a file's MIME type from the server.")
    assert "MAY" not in found.definitions and all("MAY" not in label for label in found.definitions)
    assert not any("'s" in p or p.endswith((" a", " the")) for p in predicates(found))


def test_nationality_words_are_mentions_but_never_related():
    found = extract("British units made a night attack on an American encampment.")
    assert found.relations == []


def test_months_and_sentence_openers_are_not_entities():
    found = extract("The journal was first published in January 1960 by Elsevier. According to "
                    "Journal Citation Reports, the journal has an impact factor of 2.1.")
    assert "January" not in found.definitions and "According" not in found.definitions
    assert "Journal Citation Reports" in found.definitions


def test_an_appositive_names_the_object_and_no_bare_noun_is_one():
    company = extract("Film Journal International is published by the American company Prometheus "
                      "Global Media.")
    assert Relation("Film Journal International", "is published by", "Prometheus Global Media") \
        in company.relations
    assert "company" not in {r.object for r in company.relations}


def test_never_related_to_itself():
    found = extract("The Sun sold more copies than The Sun.", title="The Sun (United Kingdom)")
    assert all(r.subject != r.object for r in found.relations)


# -- labels ---------------------------------------------------------------------------------------------

def test_labels_are_normalised():
    assert normalise_label("“Hall’s”") == "Hall"
    assert normalise_label("  G. Stanley   Hall's ") == "G. Stanley Hall"
    assert normalise_label('"Adweek",') == "Adweek"
    assert normalise_label("Jennings'") == "Jennings"
    assert normalise_label("U.S.") == "U.S."
    assert normalise_label("McDonald's", possessive=False) == "McDonald's"
    assert doctest.testmod(tracegraph.base.extraction.facts).failed == 0


def test_a_surname_alone_is_the_one_person_of_the_passage_who_has_it():
    found = extract('The book was praised by "Adweek". G. Stanley Hall\'s theory shaped the field. '
                    "Hall, who was the first president of the American Psychological Association, wrote it.")
    assert "G. Stanley Hall" in found.definitions and "G. Stanley Hall's" not in found.definitions
    assert Relation("G. Stanley Hall", "was the first president of", "American Psychological Association") \
        in found.relations


# -- the processor passes the chunk's title -------------------------------------------------------------

class _Sink:
    def __init__(self) -> None:
        self.sent = []

    async def send(self, message) -> None:
        self.sent.append(message)

    async def request(self, message):  # kg-extract asks whether the document was removed: it was not
        return TriplesQueryResponse()


class _Flow:
    def __init__(self) -> None:
        self.sinks: dict[str, _Sink] = {}

    def __getitem__(self, spec) -> _Sink:
        if isinstance(spec, Parameter):
            return spec.default  # a flow that sets no parameters: each takes its default
        return self.sinks.setdefault(spec.name, _Sink())


async def test_processor_extracts_offline_with_the_chunk_title():
    extractor = KnowledgeExtractor(InprocBackend(), RuntimeSettings(extractor="offline"))
    meta = Metadata(id="urn:chunk:1", root="doc-1")
    flow = _Flow()
    await extractor.extract(TextChunk(metadata=meta, text=B_BOY, document="doc-1", index=1, title="B Boy (song)",
                                      kind="text/plain"), flow)
    labels = {c.label for m in flow.sinks["entity-contexts"].sent for c in m.entities}
    assert "B Boy (song)" in labels and "Ruffhouse Records" in labels
    assert TextChunk(metadata=meta, text="", document="doc-1", index=1).title == ""
