"""Relations from the clauses of a parsed sentence: who does what to whom, read from the dependency parse.

Each verb's subject and objects are found by their grammatical roles, in every voice and clause shape: active
("Billing calls Ledger"), passive ("Ledger is owned by the Billing squad"), copular ("X is the owner of Y",
"X is on version 4.2"), relative clauses ("Postgres, which is run by the Data team"), coordination ("calls A
and B", "A and B call C", "is owned by X and maintained by Y"), and prepositional objects ("stores carts in
Valkey", "is hosted in the EKS cluster"). A negated clause ("does not depend on") gives nothing, and so does a
question. A pronoun or "this service" is the passage's current subject (`Topic`), never the document.
Verbs in the canonical vocabulary become its predicates; other verbs keep their phrase ("was founded by")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from spacy.tokens import Span, Token

from tracegraph.base.extraction import vocabulary as vocab
from tracegraph.base.temporal.dates import iso_date
from tracegraph.base.extraction.facts import Confidence
from tracegraph.base.extraction.mentions import Anaphor, Lexicon, Mention, find_mentions, person_like
from tracegraph.base.extraction.names import KIND_WORDS, EntityKind

CANONICAL = Confidence(0.85, "offline parse: a verb of the vocabulary with its subject and object")
PHRASAL = Confidence(0.7, "offline parse: a verb phrase with its subject and object")
COPULAR_KIND = Confidence(0.9, "offline parse: a copular sentence says what kind of thing it is ('X is a <kind>')")
COPULAR_DEFINITION = Confidence(0.9, "offline parse: a copular sentence ('X is a …') taken as its definition")
VALUE = Confidence(0.8, "offline parse: a version or status the sentence states")
HEDGED = 0.6  # factor for "may", "could", "might", "if …": a possibility, not a statement

_SUBJECTS = ("nsubj", "nsubjpass", "csubj")
_OBJECTS = ("dobj", "obj", "attr", "oprd", "dative")
_RELATIVE = frozenset("which that who whom whose".split())
_MODALS = frozenset("may might could would should".split())
_NEGATIONS = frozenset("not n't never no longer".split())
_STATUSES = frozenset("""deprecated retired decommissioned experimental stable beta alpha deprecated
end-of-life eol legacy obsolete archived sunset active live frozen superseded accepted proposed rejected""".split())
_ROLE_NOUNS = {"owner": "be owner", "owners": "be owner", "lead": "be lead", "leader": "be leader",
               "maintainer": "be maintainer", "maintainers": "be maintainer", "head": "be lead",
               "steward": "be maintainer", "manager": "be lead"}
_PERSONAL_NAME = re.compile(r"[A-Z][a-z'’-]+(?: (?:[A-Z]\.|[A-Z][a-z'’-]+)){1,3}")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+[\w.-]*$|^v\d+$", re.I)
_REPLACING = frozenset("replace swap substitute supplant".split())  # "replaced X with Y"
_MOVING = frozenset("move migrate switch transition change upgrade port shift".split())  # "moved from X to Y"
# Named-entity types that are never a dependency. Not places: the small model calls PostgreSQL and Valkey GPEs.
_NOT_DEPENDENCIES = frozenset({"NORP", "DATE", "TIME"})
# Verbs too general to name a relation on their own ("does the conversion from", "starts all of").
_LIGHT_VERBS = frozenset("""be do have get make take go come see start stop want need let give put keep set seem
become include contain provide allow enable help try show find say tell use call""".split())
_RELATING = frozenset(["", "in", "on", "at", "by", "for", "from", "to", "into", "with", "of", "under", "during",
                       "against", "between", "across", "within", "through", "after", "before"])
_VAGUE = frozenset("""new old large small big great good best major minor main former current famous popular
well-known important early late recent modern local various several other same different such free high low long
short full young simple common real true whole fast scalable powerful leading notable prominent first last""".split())
_KIND_STOP = frozenset("""kind type sort form part member one example way thing set number lot branch successor
predecessor alternative replacement version variant fork copy mix combination collection series pattern""".split())


@dataclass(slots=True)
class Topic:
    """Who the passage is about, for "it", "this service" and "the controller": the latest sentence subject
    that named an entity, else the enclosing section's, row's or document's subject (`default`)."""

    default: str = ""
    current: str = ""
    recent: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)  # the people named so far, latest last: "he", "she"

    def resolve(self, anaphor: Anaphor) -> str:
        if anaphor.kind == "person" and not anaphor.words:
            if self.people:
                return self.people[-1]
            # No one named yet: "he" is the passage's subject when that reads as a person's name ("Emil Fischer")
            return self.default if _PERSONAL_NAME.fullmatch(re.sub(r"\s*\([^()]*\)$", "", self.default)) else ""
        here = self.current or self.default
        if not anaphor.words or all(w in KIND_WORDS for w in anaphor.words):
            return here
        last = anaphor.words[-1]
        for label in reversed([*self.recent, self.default]):
            words = re.findall(r"[\w-]+", label.lower())
            if words and last in words[-2:] and set(anaphor.words) <= set(words):
                return label  # "the controller" → AWS Load Balancer Controller; "the song" → B Boy (song)
        return ""

    def saw(self, label: str, person: bool = False) -> None:
        for seen in (self.recent, *([self.people] if person else [])):
            if label in seen:
                seen.remove(label)
            seen.append(label)
            del seen[:-12]


@dataclass(frozen=True, slots=True)
class Found:
    """A relation read from a clause, before it is placed on lines: subject and object labels (the object a
    literal with `value`), the canonical or phrasal predicate, the text's own words, the date it states."""

    subject: str
    predicate: str
    object: str
    confidence: Confidence
    value: bool = False
    phrase: str = ""
    since: str = ""


@dataclass(slots=True)
class SentenceReading:
    relations: list[Found] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    kinds: dict[str, EntityKind] = field(default_factory=dict)
    definition: tuple[str, str] | None = None  # (label, the defining phrase: "a regional energy operator …")


def read_sentence(sentence: Span, lexicon: Lexicon, topic: Topic) -> SentenceReading:
    """Everything one sentence states; `topic` is updated with its subject."""
    mentions, anaphors = find_mentions(sentence, lexicon)
    reading = SentenceReading(mentions=sorted(set(mentions.values()), key=lambda m: m.start))
    for m in reading.mentions:
        if m.kind:
            reading.kinds.setdefault(m.label, m.kind)
    if sentence.text.rstrip().endswith("?"):
        return reading
    reader = _Clauses(sentence, mentions, anaphors, topic)
    verbs = [t for t in sentence if _is_predicate(t)]
    for verb in verbs:
        reading.relations += reader.relations_of(verb)
    reading.relations += reader.appositions()
    reading.definition = reader.definition
    reading.kinds.update(reader.kinds)
    subject = reader.first_subject
    if subject:
        topic.current = subject
    for m in reading.mentions:
        # A person named in passing ("after Mao Zedong's call", "the widow of X") is not who "he" goes on to be
        aside = sentence.doc[m.head].dep_ in ("poss", "pobj")
        topic.saw(m.label, person=not aside and (m.kind == "person" or person_like(sentence.doc[m.start:m.end])))
    return reading


def _is_predicate(token: Token) -> bool:
    if token.pos_ in ("NOUN", "PROPN") and token.dep_ in ("ROOT", "conj") and \
            any(c.dep_ in ("nsubj", "nsubjpass") for c in token.children) and \
            any(c.dep_ in ("aux", "dobj", "prep") for c in token.children):
        return True  # a verb tagged as a noun ("This service does store …"), recognised by its subject
    if token.pos_ == "VERB":
        return token.dep_ not in ("amod", "compound") or token.tag_ == "VBN" and token.dep_ == "acl"
    return token.pos_ == "AUX" and token.lemma_ == "be" and token.dep_ in ("ROOT", "conj", "relcl", "ccomp", "advcl")


class _Clauses:
    def __init__(self, sentence: Span, mentions: dict[int, Mention], anaphors: dict[int, Anaphor],
                 topic: Topic) -> None:
        self.sentence = sentence
        self.mentions = mentions
        self.anaphors = anaphors
        self.topic = topic
        self.definition: tuple[str, str] | None = None
        self.kinds: dict[str, EntityKind] = {}
        self.first_subject = ""

    # ------------------------------------------------------------ arguments

    def entity(self, token: Token, *, subject: bool = False) -> str:
        """The entity a token stands for: its mention, the name in apposition to it ("the group Lost Boyz",
        "the American company Prometheus Global Media"), or what its anaphor refers to (a pronoun only as a
        subject: "writes them to PostgreSQL" says nothing about who "them" is)."""
        found = self.mention_of(token)
        if found is not None:
            return found.label
        anaphor = self.anaphors.get(token.i)
        if anaphor is None or (not anaphor.words and not subject):
            return ""
        return self.topic.resolve(anaphor)

    def mention_of(self, token: Token) -> Mention | None:
        """The name a token stands for: its own, the one in apposition to it, or the name heading its phrase."""
        found = self.mentions.get(token.i)
        if found is not None:
            return found
        for child in token.children:
            if child.dep_ == "appos" and child.i in self.mentions:
                return self.mentions[child.i]
        named = [c for c in token.lefts if c.dep_ == "compound" and c.i in self.mentions and c.i == token.i - 1]
        if named:  # "the Concourse CI pipeline", "the Redis service": the name that heads the phrase
            return self.mentions[named[0].i]
        return None

    def entity_type(self, label: str) -> str:
        """The parser's entity type of a name in this sentence when one named entity is the whole name ("GPE"
        for "London"), "" otherwise."""
        for m in set(self.mentions.values()):
            if m.label == label:
                for ent in self.sentence.doc.ents:
                    inner = [t for t in ent if t.lower_ not in ("the", "a", "an")]
                    if inner and inner[0].i == m.start and ent.end == m.end:
                        return ent.label_
        return ""

    def subjects(self, verb: Token) -> tuple[list[str], bool]:
        """(the subjects' entities, whether the verb is passive)."""
        passive = any(c.dep_ in ("auxpass", "nsubjpass") for c in verb.children) or \
            (verb.dep_ == "acl" and verb.tag_ == "VBN") or \
            (verb.dep_ == "conj" and verb.tag_ == "VBN" and any(c.dep_ == "auxpass" for c in verb.head.children))
        own = [c for c in verb.children if c.dep_ in _SUBJECTS]
        if own and own[0].lower_ == "it" and _extraposed(verb):
            return [], passive  # "It has been an honor to lead …": no one is "it"
        if own:
            subject = own[0]
            if subject.lower_ in _RELATIVE and verb.dep_ == "relcl":
                return self._coordinated(verb.head), passive
            return self._coordinated(subject), passive
        if verb.dep_ in ("relcl", "acl") and verb.head.pos_ in ("NOUN", "PROPN"):
            return self._coordinated(verb.head), passive
        opening = [c for c in verb.lefts if c.dep_ in ("compound", "npadvmod") and c.pos_ in ("NOUN", "PROPN")]
        if opening and verb.dep_ == "ROOT":  # "Billing runs on Kubernetes" parsed with Billing as a compound
            return self._coordinated(opening[0]), passive
        first = self.mentions.get(self.sentence.start + (1 if self.sentence[0].text in '"“' else 0))
        if verb.dep_ == "ROOT" and first is not None and first.end <= verb.i + 1 and \
                all(t.is_punct or first.start <= t.i < first.end for t in self.sentence.doc[self.sentence.start:first.start]):
            return [first.label], passive  # '"It'll Be Me" is a song …': a quoted title the parser split up
        infinitive = any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children)
        if verb.dep_ in ("conj", "advcl", "xcomp") and not infinitive and verb.head is not verb and \
                verb.head.pos_ in ("VERB", "AUX"):
            subjects, _ = self.subjects(verb.head)
            return subjects, passive
        return [], passive

    def _coordinated(self, token: Token) -> list[str]:
        """The subject and those coordinated with it ("A and B call C"); a subject that names no entity but
        has an appositive that does ("his brother, Jonathan Nolan, …") is the appositive."""
        found = []
        for t in (token, *token.conjuncts):
            label = self.entity(t, subject=True)
            if not label:
                label = next((e for c in t.children if c.dep_ == "appos" and (e := self.entity(c))), "")
            found.append(label)
        return list(dict.fromkeys(f for f in found if f))

    def objects(self, verb: Token) -> Iterator[tuple[str, Token, str]]:
        """(preposition, object token, words between verb and object that are no entity) for each object."""
        middle = ""
        direct = any(c.dep_ in ("dobj", "obj") for c in verb.children)
        for child in verb.children:
            # "Billing calls Orbit" may parse Orbit as a predicate of an object that is not there ("calls it X")
            if child.dep_ in ("dobj", "obj", "dative") or child.dep_ == "oprd" and not direct:
                if self.entity(child):
                    yield "", child, ""
                    yield from (("", c, "") for c in child.conjuncts if self.entity(c))
                middle = _phrase_text(child)
                for prep in (c for c in child.children if c.dep_ == "prep"):
                    yield from self._prepositional(prep, middle)
        for child in verb.children:
            if child.dep_ in ("prep", "agent"):
                yield from self._prepositional(child, middle)

    def _prepositional(self, prep: Token, middle: str) -> Iterator[tuple[str, Token, str]]:
        word = prep.lower_
        before = {t.lower_ for t in prep.doc[max(0, prep.i - 3):prep.i]}
        if before & {"instead", "rather", "except"} or word in ("than", "without", "except", "unlike"):
            return  # "through the Gateway instead of directly to the Orbis Cloud": not to the Orbis Cloud
        for pobj in (c for c in prep.children if c.dep_ == "pobj"):
            for target in (pobj, *pobj.conjuncts):
                if self.entity(target):
                    yield word, target, middle
                else:  # "publishes to a topic on Kafka", "runs in a pod on the EKS cluster"
                    for inner in (c for c in target.children if c.dep_ == "prep"):
                        for deeper in (c for c in inner.children if c.dep_ == "pobj"):
                            if self.entity(deeper) and word in ("in", "on", "to", "from", "into"):
                                yield word, deeper, f"{middle} {word} {_phrase_text(target)}".strip()

    # ------------------------------------------------------------ clauses

    def relations_of(self, verb: Token) -> list[Found]:
        subjects, passive = self.subjects(verb)
        if subjects and not self.first_subject and verb.dep_ == "ROOT":
            self.first_subject = subjects[0]
            self.topic.current = subjects[0]  # "Checkout does not depend on Tax, but it calls Orders"
        if _negated(verb):
            return []
        if _historical(verb):  # "was the currency of Finland until 2002": true of its time, in its own tense;
            # a canonical relation ("until now Skyline wrote to …") no longer holds, so it is no fact now
            return [f for f in self.relations_of_now(verb, subjects, passive) if f.confidence is PHRASAL]
        return self.relations_of_now(verb, subjects, passive)

    def relations_of_now(self, verb: Token, subjects: list[str], passive: bool) -> list[Found]:
        changes = list(self._changes(verb, passive))
        if changes or not subjects:
            return changes  # "we replaced Redis with Valkey": the change, whoever made it
        hedge = _hedged(verb)
        since = _date_of(verb)
        if verb.lemma_ == "be" and verb.pos_ == "AUX":
            found = list(self._copula(verb, subjects, since))
        else:
            found = list(self._verbal(verb, subjects, passive, since))
        if hedge:
            found = [_weakened(f) for f in found]
        return found

    def _verbal(self, verb: Token, subjects: list[str], passive: bool, since: str) -> Iterator[Found]:
        lemma = _lemma(verb)
        finite = verb.tag_ in ("VBD", "VBZ", "VBP", "MD") or (verb.tag_ == "VBN" and passive) or \
            any(c.dep_ == "aux" and c.lower_ != "to" for c in verb.children)
        if passive and verb.lower_ in _STATUSES:  # "Ledger is deprecated"
            for subject in subjects:
                yield Found(subject, vocab.STATUS, verb.lower_, VALUE, value=True, phrase=f"is {verb.lower_}",
                            since=since)
        for preposition, target, middle in self.objects(verb):
            obj = self.entity(target)
            canonical = vocab.canonical(lemma, preposition, passive=passive)
            phrase = _verb_phrase(verb, middle, preposition)
            for subject in subjects:
                if subject == obj:
                    continue
                if canonical:
                    s, o = (obj, subject) if canonical.reverse else (subject, obj)
                    if lemma in ("run", "manage") and canonical.label == vocab.OPERATED_BY and \
                            self.kind_of(o) not in ("team", "person"):
                        continue  # "the script runs one browser" is no operator; "the Data team runs Postgres" is
                    if canonical.family == "dependency" and self.entity_type(o) in _NOT_DEPENDENCIES:
                        continue  # "the event was hosted in London": a place or a person is nothing to depend on
                    self._type_roles(canonical.label, o)
                    yield Found(s, canonical.label, o, CANONICAL, phrase=phrase, since=since)
                elif finite and self._phrasal(verb, preposition, middle, target):
                    yield Found(subject, _phrasal_label(verb, preposition, passive, middle), obj, PHRASAL,
                                phrase=phrase, since=since)
        yield from self._versions(verb, subjects, since)

    def kind_of(self, label: str) -> str:
        """An entity's kind as this sentence names it ("the Data team"), "" when it says none."""
        return self.kinds.get(label, "") or next((m.kind for m in set(self.mentions.values()) if m.label == label),
                                                 "")

    def _phrasal(self, verb: Token, preposition: str, middle: str, target: Token) -> bool:
        """Whether a verb outside the vocabulary states a relation worth keeping: a content verb ("founded",
        "was born in"), a short object, a preposition that relates ("in", "by", "for" …), and an object that
        is a proper name, not a word the document also uses as one."""
        mention = self.mention_of(target)
        proper = mention is not None and any(t.pos_ == "PROPN" or t.ent_type_ for t in
                                             self.sentence.doc[mention.start:mention.end])
        return (verb.lemma_.lower() not in _LIGHT_VERBS and len(middle.split()) <= 2 and proper
                and preposition in _RELATING)

    def _changes(self, verb: Token, passive: bool) -> Iterator[Found]:
        """What one thing was replaced by: "replaced Redis with Valkey", "Redis was replaced by Valkey", "moved
        from Jenkins to Concourse", "migrate the state from Terraform Cloud to S3"."""
        lemma = verb.lemma_.lower()
        targets: dict[str, list[str]] = {}
        attached = [c for o in verb.children if o.dep_ == "dobj" for c in o.children]  # "the Redis service with …"
        for child in [*verb.children, *attached]:
            if child.dep_ in ("prep", "agent") and child.lower_ in ("with", "by", "from", "to", "onto", "towards"):
                named = [self.entity(t) for p in child.children if p.dep_ == "pobj" for t in (p, *p.conjuncts)]
                targets.setdefault(child.lower_, []).extend(n for n in named if n)
        if lemma in _REPLACING:
            objects = [c for c in verb.children if c.dep_ == "dobj"]
            # "Redis replaced with Valkey" (a headline's passive without its auxiliary): the subject was replaced
            role = "nsubjpass" if passive else "dobj" if objects or "with" not in targets else "nsubj"
            replaced = [self.entity(c, subject=role != "dobj") for c in verb.children if c.dep_ == role]
            old, new = [o for o in replaced if o], targets.get("with", []) + targets.get("by", [])
        elif lemma in _MOVING:
            old, new = targets.get("from", []), targets.get("to", []) + targets.get("onto", []) + \
                targets.get("towards", [])
        else:
            return
        since = _date_of(verb)
        phrase = f"{verb.lower_} with" if lemma in _REPLACING else f"{verb.lower_} from … to"
        for before in old:
            for after in new:
                if before != after:
                    yield Found(before, vocab.REPLACED_BY, after, CANONICAL, phrase=phrase, since=since)

    def _copula(self, verb: Token, subjects: list[str], since: str) -> Iterator[Found]:
        """"X is a …", "X is the owner of Y", "X is responsible for Y", "X is on version 4.2", "X is deprecated"."""
        for child in verb.children:
            if child.dep_ == "attr" and child.lower_ == "one" and (whole := _partitive(child)) is not None:
                yield from self._complement(verb, whole, subjects, since, article="a")  # "one of the townships in X"
            elif child.dep_ in ("attr", "acomp"):
                yield from self._complement(verb, child, subjects, since)
            elif child.dep_ == "prep":
                yield from self._copular_preposition(verb, child, subjects, since)

    def _complement(self, verb: Token | None, complement: Token, subjects: list[str], since: str,
                    article: str | None = None) -> Iterator[Found]:
        """"X is deprecated", "X is the owner of Y", "X is a song by Y", "X is a film directed by Y", "X is a
        <kind>" (and the sentence then defines X). `article` stands in for the complement's own ("one of the
        rural townships" reads as "a rural township")."""
        word = complement.lower_
        if word in _STATUSES and complement.dep_ == "acomp" or word in _STATUSES and not list(complement.children):
            for subject in subjects:
                yield Found(subject, vocab.STATUS, word, VALUE, value=True, phrase=f"is {word}", since=since)
            return
        role = _ROLE_NOUNS.get(word) if complement.pos_ == "NOUN" else None
        if article is None:
            article = next((c.lower_ for c in complement.children if c.dep_ == "det"), "")
        common = complement.pos_ == "NOUN" or (complement.pos_ == "PROPN" and complement.is_lower)
        preps = [c for each in (complement, *(k for k in complement.conjuncts if k.pos_ in ("NOUN", "PROPN")))
                 for c in each.children if c.dep_ == "prep"]  # "a lawyer and member of the Board"
        for prep in preps:
            complement_word = prep.head
            lemma = (_ROLE_NOUNS.get(complement_word.lower_) if complement_word.pos_ == "NOUN" else None) or \
                (f"be {complement_word.lower_}" if complement_word.pos_ == "ADJ" else "")
            for pobj in (c for c in prep.children if c.dep_ == "pobj"):
                for target in (pobj, *pobj.conjuncts):
                    obj = self.entity(target)
                    if not obj:
                        continue
                    canonical = vocab.canonical(lemma, prep.lower_) if lemma else None
                    said = article if complement_word.i == complement.i else ""
                    if said in ("a", "an"):  # "an American diplomatic post" of "one of the American … posts"
                        said = "an" if _content_words(complement_word)[0][:1] in "aeiou" else "a"
                    phrase = f"{verb.text if verb else 'is'} {said} {_phrase_text(complement_word)} {prep.lower_}".lower()
                    for subject in subjects:
                        if subject == obj:
                            continue
                        if canonical:
                            s, o = (obj, subject) if canonical.reverse else (subject, obj)
                            self._type_roles(canonical.label, o)
                            yield Found(s, canonical.label, o, CANONICAL, phrase=" ".join(phrase.split()), since=since)
                        elif complement_word.pos_ in ("NOUN", "PROPN", "ADJ"):
                            label = " ".join([_copula_word(verb), said, *_content_words(complement_word), prep.lower_])
                            yield Found(subject, " ".join(label.split()), obj, PHRASAL, phrase=label, since=since)
        clauses = [c for c in complement.children if c.dep_ == "acl" and c.pos_ == "VERB"]
        for clause in [*clauses, *(k for c in clauses for k in c.conjuncts if k.pos_ == "VERB")]:
            # "X is a film directed by Y, starring Z": the clause on the complement is about X
            passive = clause.tag_ == "VBN"
            for preposition, target, middle in self.objects(clause):
                obj = self.entity(target)
                canonical = vocab.canonical(_lemma(clause), preposition, passive=passive) if obj else None
                phrase = _verb_phrase(clause, middle, preposition)
                for subject in subjects if obj else ():
                    if subject == obj:
                        continue
                    if canonical:  # "a service owned by the Payments team"
                        s, o = (obj, subject) if canonical.reverse else (subject, obj)
                        yield Found(s, canonical.label, o, CANONICAL, phrase=phrase, since=since)
                    elif self._phrasal(clause, preposition, middle, target):
                        yield Found(subject, _phrasal_label(clause, preposition, passive), obj, PHRASAL,
                                    phrase=phrase, since=since)
        if (complement.dep_ in ("attr", "appos") or article == "a") and common and complement.i not in self.mentions:
            # "an English Jesuit controversialist" describes; only a phrase that is itself a name is no definition
            named = verb is None or not any(c.dep_ in _SUBJECTS and c.pos_ == "PRON" for c in verb.children)
            if self.definition is None and named and verb is not None and (article in ("a", "an") or word == "one"):
                # "X is a …": the complement defines its subject; the definition is that phrase, never the sentence
                self.definition = (subjects[0], _definition_text(complement))
            kind = _kind_phrase(complement)
            if article in ("a", "an") and kind:
                entity_kind = KIND_WORDS.get(complement.lower_, ("", False))[0]
                for subject in subjects:
                    if entity_kind:
                        self.kinds.setdefault(subject, entity_kind)
                    if (not entity_kind or " " in kind) and kind not in _GENERIC_KINDS:  # "a C++ based service" is a
                        yield Found(subject, vocab.KIND_OF, kind, COPULAR_KIND)  # kind only; "a revision control system" says more

    def appositions(self) -> Iterator[Found]:
        """"Copa Cat Pack, a swing band led by Matt Catingub": an appositive says what the name before it is,
        as "is" would."""
        for token in self.sentence:
            if token.dep_ == "appos" and token.pos_ == "NOUN" and token.i not in self.mentions and \
                    token.head.i in self.mentions and token.head.i < token.i:
                yield from self._complement(None, token, [self.mentions[token.head.i].label], "")

    def _copular_preposition(self, verb: Token, prep: Token, subjects: list[str], since: str) -> Iterator[Found]:
        """"is on version 4.2", "is on call for Billing", "is in the EKS cluster"."""
        for pobj in (c for c in prep.children if c.dep_ == "pobj"):
            if pobj.lower_ in ("version", "release", "v"):
                number = next((c.text for c in pobj.children if _VERSION.match(c.text) or c.like_num), "")
                if number:
                    for subject in subjects:
                        yield Found(subject, vocab.VERSION, number.lstrip("vV"), VALUE, value=True,
                                    phrase=f"is on version {number}", since=since)
                continue
            if pobj.lower_ in ("call", "on-call", "duty"):
                for inner in (c for c in pobj.children if c.dep_ == "prep"):
                    for target in (c for c in inner.children if c.dep_ == "pobj"):
                        for t in (target, *target.conjuncts):
                            obj = self.entity(t)
                            for subject in subjects:
                                if obj and obj != subject:
                                    yield Found(obj, vocab.ON_CALL, subject, CANONICAL, phrase="is on call for",
                                                since=since)
                continue
            for target in (pobj, *pobj.conjuncts):
                obj = self.entity(target)
                if obj and prep.lower_ in ("in", "on", "inside", "within", "part of"):
                    for subject in subjects:
                        if subject != obj:
                            said = f"{_copula_word(verb)} {prep.lower_}"
                            yield Found(subject, said, obj, PHRASAL, phrase=said,
                                        since=since)

    def _versions(self, verb: Token, subjects: list[str], since: str) -> Iterator[Found]:
        """"Ledger 4.3 ships on …", "upgraded Ledger to 4.3", "Ledger runs version 4.3"."""
        lemma = verb.lemma_.lower()
        if lemma in ("ship", "release", "launch", "publish", "tag", "cut", "roll", "go", "land"):
            for subject_token in (c for c in verb.children if c.dep_ in _SUBJECTS):
                mention = self.mentions.get(subject_token.i)
                number = (mention.version if mention else "") or next(
                    (c.text for c in subject_token.children if c.dep_ == "nummod" and _VERSION.match(c.text)), "")
                if mention and number:
                    yield Found(mention.label, vocab.VERSION, number.lstrip("vV"), VALUE, value=True,
                                phrase=f"{number} {verb.lemma_}", since=since)
        if lemma in ("upgrade", "update", "bump", "move", "migrate") or lemma == "run":
            for prep in (c for c in verb.children if c.dep_ == "prep" and c.lower_ in ("to",)):
                for pobj in (c for c in prep.children if c.dep_ == "pobj"):
                    number = pobj.text if _VERSION.match(pobj.text) else next(
                        (c.text for c in pobj.children if _VERSION.match(c.text)), "")
                    targets = [self.entity(c) for c in verb.children if c.dep_ in ("dobj", "nsubjpass")]
                    for label in [t for t in targets if t] or (subjects if lemma != "run" else []):
                        if number:
                            yield Found(label, vocab.VERSION, number.lstrip("vV"), VALUE, value=True,
                                        phrase=f"{verb.text} to {number}", since=since)

    def _type_roles(self, label: str, obj: str) -> None:
        """What a relation says of its object's kind: what data is written to or read from is a datastore; an
        owner, lead or maintainer whose name the parser calls a PERSON is a person."""
        if label in (vocab.WRITES_TO, vocab.READS_FROM, vocab.CONSUMES_FROM, vocab.PUBLISHES_TO):
            self.kinds.setdefault(obj, "datastore")
        elif label in vocab.OWNERSHIP_LABELS and not self.kind_of(obj):
            found = next((m for m in set(self.mentions.values()) if m.label == obj), None)
            if found is not None and person_like(self.sentence.doc[found.start:found.end]):
                self.kinds.setdefault(obj, "person")


def _build_verb_forms() -> dict[str, str]:
    """Third-person forms of the vocabulary's verbs ("stores" → store), for sentences the parser misread."""
    forms: dict[str, str] = {}
    for lemma in vocab.verbs():
        if lemma.endswith("y") and lemma[-2:-1] not in "aeiou":
            forms[lemma[:-1] + "ies"] = lemma
        elif lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
            forms[lemma + "es"] = lemma
        else:
            forms[lemma + "s"] = lemma
    return forms


VERB_FORMS = _build_verb_forms()
# Verbs a changelog item or a decision's title opens with in the imperative ("Replace Locust with k6").
IMPERATIVES = frozenset({*vocab.verbs(), *_REPLACING, *_MOVING, "add", "remove", "drop", "deprecate", "retire", "introduce",
                         "rename", "rewrite", "decommission", "bump"})


@dataclass(frozen=True, slots=True)
class Repair:
    """A sentence rewritten so its verb cannot be read as a noun, and the verb as the text wrote it."""

    text: str
    written: str  # "stores"
    base: str  # "store"

    def restore(self, found: Found) -> Found:
        """The relation with the text's own verb in its phrase again."""
        phrase = re.sub(rf"\b{re.escape(self.base)}\b", self.written, found.phrase, count=1)
        return Found(found.subject, found.predicate, found.object, found.confidence, found.value, phrase, found.since)


def repaired(sentence: Span) -> Repair | None:
    """The sentence again with its verb made unmistakable, when the parser found no verb because a vocabulary
    verb reads like a plural noun ("This service stores carts in Valkey" → "… will store carts …"; a modal
    forces the base form to be a verb); None when it found one."""
    if any(_is_predicate(t) for t in sentence):
        return None
    text = sentence.doc.text
    for token in sentence:
        lemma = VERB_FORMS.get(token.lower_)
        if lemma and token.i > sentence.start:
            rewritten = f"{text[sentence.start_char:token.idx]}will {lemma}{text[token.idx + len(token.text):sentence.end_char]}"
            return Repair(rewritten, token.text.lower(), lemma)
    return None


def _copula_word(verb: Token | None) -> str:
    """"was" for a copula in the past ("was the currency of"), else "is"."""
    return "was" if verb is not None and verb.tag_ == "VBD" else "is"


def _partitive(one: Token) -> Token | None:
    """The plural noun of "one of the six consular posts", or None."""
    for prep in (c for c in one.children if c.dep_ == "prep" and c.lower_ == "of"):
        for pobj in (c for c in prep.children if c.dep_ == "pobj" and c.pos_ == "NOUN" and c.tag_ == "NNS"):
            return pobj
    return None


def _lemma(verb: Token) -> str:
    particle = next((c.lower_ for c in verb.children if c.dep_ == "prt"), "")
    lemma = verb.lemma_.lower()
    return f"{lemma} {particle}" if particle and vocab.knows(lemma, particle) else lemma


def _negated(verb: Token) -> bool:
    """"does not depend on", "never calls", "no longer uses", "nothing depends on it"."""
    for child in verb.children:
        if child.dep_ == "neg" or child.lower_ in ("never",):
            return True
        if child.lower_ == "longer" and any(c.lower_ == "no" for c in child.children):
            return True
        if child.dep_ in _SUBJECTS and child.lower_ in ("nothing", "nobody", "none", "neither"):
            return True
    return verb.dep_ == "conj" and _negated(verb.head) and not any(c.dep_ in _SUBJECTS for c in verb.children) \
        and not any(c.dep_ == "cc" and c.lower_ in ("but",) for c in verb.head.children)


def _extraposed(verb: Token) -> bool:
    """"It is healthy for the team to rotate …", "it seems that …", "it's been an honor serving …": an empty "it"
    whose content is a clause."""
    clauses = [c for c in verb.subtree if c.dep_ in ("xcomp", "ccomp", "csubj", "advcl", "relcl", "acl")]
    return any(c.i > verb.i and (any(a.lower_ == "to" and a.dep_ == "aux" for a in c.children) or c.tag_ == "VBG"
                                 or any(m.dep_ == "mark" and m.lower_ == "that" for m in c.children))
               for c in clauses)


def _historical(verb: Token) -> bool:
    """A state that held before and no longer does: "until now Skyline wrote to …", "previously used …",
    "formerly owned by …"."""
    if verb.tag_ != "VBD" and not any(c.lower_ in ("used",) and c.dep_ == "aux" for c in verb.children):
        return False
    words = {t.lower_ for t in verb.subtree} | {t.lower_ for t in verb.children}
    return bool(words & {"until", "previously", "formerly", "originally", "once"})


def _hedged(verb: Token) -> bool:
    """A possibility, not a statement: a modal verb, or a clause under "if"/"unless"/"whether"."""
    if any(c.dep_ == "aux" and c.lower_ in _MODALS for c in verb.children):
        return True
    node = verb
    while node.dep_ in ("conj", "xcomp") and node.head is not node:
        node = node.head
    return node.dep_ == "advcl" and any(c.dep_ == "mark" and c.lower_ in ("if", "unless", "whether")
                                        for c in node.children)


def _weakened(found: Found) -> Found:
    c = found.confidence
    return Found(found.subject, found.predicate, found.object,
                 Confidence(round(c.value * HEDGED, 3), f"{c.reason}; hedged (a modal or a condition)"),
                 found.value, found.phrase, found.since)


def _date_of(verb: Token) -> str:
    """The date a clause says it happened or holds from: "on 2025-05-12", "since March 2024", "in 2023"."""
    for child in verb.children:
        if child.dep_ == "prep" and child.lower_ in ("on", "since", "from", "in", "as", "by", "after"):
            for pobj in (c for c in child.children if c.dep_ == "pobj"):
                if pobj.ent_type_ == "DATE":
                    found = iso_date(_ent_text(pobj))
                    if found:
                        return found
        if child.dep_ in ("npadvmod", "tmod") and child.ent_type_ == "DATE":
            found = iso_date(_ent_text(child))
            if found:
                return found
    return ""


def _ent_text(token: Token) -> str:
    doc = token.doc
    for ent in doc.ents:
        if ent.start <= token.i < ent.end:
            return ent.text
    return token.text


def _phrase_text(token: Token) -> str:
    """A noun phrase's words, without determiners ("user shopping carts")."""
    dropped = {d.i for t in token.children if t.dep_ in ("poss", "nummod", "det") for d in t.subtree}
    words = [t for t in token.subtree if t.dep_ not in ("det", "punct", "prep", "pobj", "relcl", "acl", "case")
             and t.i <= token.i and t.i not in dropped]
    return " ".join(t.text for t in words)


def _content_words(token: Token) -> list[str]:
    """The noun with its modifiers, in the singular ("rural township" of "one of the rural townships")."""
    return [_singular(t) if t is token else t.lower_ for t in token.subtree
            if t.i <= token.i and t.dep_ in ("compound", "amod") or t is token]


def _singular(noun: Token) -> str:
    return noun.lemma_.lower() if noun.tag_ == "NNS" else noun.lower_


def _kind_phrase(noun: Token) -> str:
    """The kind named after "is a": the head noun with its compound nouns ("revision control system")."""
    if noun.lower_ in _KIND_STOP:
        return ""
    words, k = [], noun.i - 1
    while k >= 0 and noun.doc[k].dep_ == "compound" and noun.doc[k].pos_ == "NOUN":
        words.insert(0, noun.doc[k].lower_)
        k -= 1
    adjective = noun.doc[k] if k >= 0 else None
    if adjective is not None and adjective.dep_ == "amod" and adjective.pos_ == "ADJ" and adjective.lower_ not in _VAGUE:
        # "a regional energy operator", "a peer-reviewed journal", "an English-American film director"
        words.insert(0, adjective.text if adjective.text[:1].isupper() else adjective.lower_)
    return " ".join([*words, _singular(noun)])


def _verb_phrase(verb: Token, middle: str, preposition: str) -> str:
    """The clause's own words for the relation: auxiliaries, verb, particle, object words, preposition."""
    aux = [c.text for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i and c.lower_ != "will"]
    particle = [c.text for c in verb.children if c.dep_ == "prt"]
    return " ".join(w for w in [*aux, verb.text, *particle, middle, preposition] if w).lower()


def _phrasal_label(verb: Token, preposition: str, passive: bool, middle: str = "") -> str:
    """The predicate of a verb outside the vocabulary: its own words, with a short object that is no entity
    ("was founded by", "acquired", "ran the planning office of")."""
    aux = [c.lower_ for c in verb.children if c.dep_ in ("auxpass",) or (c.dep_ == "aux" and c.lower_ in
                                                                           ("has", "have", "had", "is", "was"))]
    particle = [c.lower_ for c in verb.children if c.dep_ == "prt"]
    words = [*(aux if passive else []), verb.lower_, *particle, middle.lower(), preposition]
    return " ".join(w for w in words if w)



# "Terraform is a tool", "X is a solution": true of almost anything, so no fact worth showing.
_GENERIC_KINDS = frozenset("""tool solution project partner thing way option part piece component product software
application approach choice alternative example feature set kind type sort member item one place thing concept
system framework""".split())


def _definition_text(complement: Token) -> str:
    """"a regional energy operator that runs the network of Northern Vale" of "X is a regional energy operator that
    runs the network of Northern Vale.": the complement with what depends on it, from its first word on."""
    top = complement
    if complement.head.lower_ == "of" and complement.head.head.lower_ == "one":
        top = complement.head.head  # "one of the largest holding companies in Eastmarch"
    text = "".join(t.text_with_ws for t in top.subtree).strip()
    return " ".join(text.rstrip(".;:,!").split())
