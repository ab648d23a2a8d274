"""The offline extractor: no model, only patterns, tuned on encyclopedic prose.

Entities are runs of capitalised words, plus the document title: a passage is about its title, so
the title named without its qualifier ("B Boy" for "B Boy (song)") and a sentence opening with a
pronoun ("It was released …") both refer to it. Definitions come from "X is a …" sentences;
relations from a short verb phrase joining two entities ("was founded by"), or, failing that,
from two entities named together ("mentioned with"). Words that are capitalised only because
they open a sentence, shouting, month names and nationality adjectives are kept out of
relations, and so are predicates without a verb. Everything it writes is labelled
`tg:extractor "offline"`, and each fact carries the strength of the rule that made it (below)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tracegraph.base.provenance.uris import slug
from tracegraph.flow.kg_extract.facts import Confidence, Extraction, Relation, normalise_label, strongest

# How far each rule's facts can be trusted: a judgement (not a measurement) of how often the rule
# reads a sentence right, on the encyclopedic prose it was tuned on. A copula is hard to misread; a
# verb phrase found far from its subject, or two names that merely share a sentence, much less so.
# All stay at or above 0.35, so the default review threshold
# (0.3) queues nothing offline: retrieval relies on every edge, "mentioned with" ones included.
# A list after the object ("starring A, B and C") shares its relation and that relation's strength.
COPULAR_KIND = Confidence(0.9, "offline rule: a copular sentence says what kind of thing it is ('X is a <kind>')")
COPULAR_DEFINITION = Confidence(0.9, "offline rule: a copular sentence ('X is a …') taken as its definition")
VERB_PHRASE = Confidence(0.8, "offline rule: a short verb phrase joins the two names ('X was founded by Y')")
RELATIVE_CLAUSE = Confidence(0.7, "offline rule: a relative clause after the subject ('X, who was … of Y')")
NAMING_SENTENCE = Confidence(0.6, "offline rule: the first sentence naming the title, taken as its definition")
TAIL_PHRASE = Confidence(0.6, "offline rule: the verb phrase ending a longer stretch, its subject found over a "
                              "comma or a description")
OPENING_SENTENCE = Confidence(0.5, "offline rule: the passage's opening sentence (it never names the title), "
                                   "taken as the title's definition")
CO_OCCURRENCE = Confidence(0.4, "offline rule: two names in one sentence with no verb phrase between them "
                                "('mentioned with')")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_COMMON = _words("""a an the this that these those it its in on at for with as by but and or if when while after
before their there here we they he she you i our his her each all some many most both such also however
then thus so to from into one two new every no not who what which whom whose where why how during
does did do is are was were can could should would will""")
# Capitalised only because they open a sentence (or are numbers, ordinals, hedges): never a name alone.
_OPENERS = _words("""according although despite following unlike like along among between later today recently
eventually neither either other another several first second third last next finally note because though
hence meanwhile moreover furthermore instead originally currently initially previously subsequently
additionally upon until within without throughout under over once twice only even yet still nearly almost
approximately about around three four five six seven eight nine ten eleven twelve twenty hundreds thousands
millions few since unfortunately top prior just recent given""")
_MONTHS = _words("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""")
# Nationality and language adjectives: fine as mentions, but "German" is not what a fact is about.
_DEMONYMS = _words("""american british english scottish welsh irish french german dutch spanish portuguese
italian greek russian polish czech slovak hungarian romanian bulgarian serbian croatian swedish norwegian
danish finnish icelandic austrian swiss belgian ukrainian turkish persian iranian iraqi syrian arab arabic
israeli egyptian african nigerian kenyan ethiopian indian pakistani bangladeshi chinese japanese korean
vietnamese thai filipino indonesian malaysian australian canadian mexican brazilian argentine chilean
colombian peruvian cuban european asian latin nordic soviet byzantine ottoman sinhalese sinhala tamil
akkadian sumerian babylonian hebrew celtic norse malayalam hindi urdu bengali jamaican azerbaijani nazi
viennese haitian moroccan algerian tunisian lebanese saudi afghan nepali tibetan mongolian kazakh uzbek georgian
armenian estonian latvian lithuanian slovenian bosnian albanian macedonian cypriot maltese scandinavian
venezuelan bolivian ecuadorian uruguayan paraguayan dominican puerto""")
_SHOUTED = _words("shall required optional recommended warning important caution deprecated")
_SUFFIXES = _words("jr sr ii iii iv")
_HONORIFICS = _words("""sir dame dr mr mrs ms captain general colonel major admiral king queen prince princess
lord lady saint st president professor prof""")
_CONNECTORS = _words("of de del della da di du des la le los las for the von van der den y and & upon")
_PRONOUNS = {"He": False, "She": False, "It": False, "They": False,
             "His": True, "Her": True, "Its": True, "Their": True}  # -> possessive
_DETERMINERS = _words("the a an this that these those his her its their our your my")
_PREPOSITIONS = _words("""by in on of to for from with at as into onto under over about after against between
through within without near via toward towards across behind beyond upon""")
_AUXILIARIES = _words("is was are were be been being has have had will would can could may might should must")
_VERBS = _AUXILIARIES | _words("""became become becomes began begin won win wins wrote write made make took
gave led left met ran sang sold bought built held fought taught brought chose drew grew knew beat came went
got did said told kept lost spent struck set put shot sat stood bore born known written given taken shown
drawn grown chosen spoken beaten seen sung begun thrown stolen driven ridden fallen hidden broken worn
overseen undertaken rewritten include includes play plays serve serves own owns lead leads""")
_NOT_VERBS = _words("""during king thing nothing something anything morning evening ring spring string
building wing ceiling red bed hundred seed speed need breed creed sacred naked wicked kindred""")
_ADVERBS = _words("also later first originally then still now once twice jointly primarily mainly formerly")
# The words an "is a" kind must not end with: it is then a list of adjectives, not a kind.
_NOT_NOUNS = _words("""fast new old large small big great good best major minor main former current famous
popular well known important early late recent modern ancient local national international public private
independent professional various several other same different such free open high low long short full
young simple common own real true whole scalable distributed powerful leading notable prominent""")
# Plural nouns whose possessive starts a name ("Men's Studies Press"), unlike "Nolan's brother".
_NAME_POSSESSIVES = _words("men women people children workers ladies boys girls king queen st saint nations")
# Last words of organisation names: "IEEE Microwave Theory and Techniques Society" is one name.
_ORGANISATIONS = _words("""society association company institute university council committee foundation
museum press group corporation department ministry commission agency authority board trust fund center
centre party union league federation academy college school laboratory service bank""")
_PARTICLES = _words("up out down off away back together")
_VAGUE_HEADS = _words("form type kind species genus member branch style variety family group collection series")
_KIND_STOP = _PREPOSITIONS | _words("that which who whose where when and or but while")

_TOKEN = re.compile(r"(?:[A-Z]\.){2,}|[A-Z]\.(?=\s+[A-Z])|[^\W_](?:[\w&'’.+-]*[\w&+])?(?:(?<=s)['’](?!\w))?|[,;:&\"]")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)\s+|(?<=[.!?][\"”’])\s+|\n{2,}|\n(?=[#*-]\s)")
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)")
_ABBREVIATION = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|Inc|Ltd|Co|Corp|St|Jr|Sr|Mt|Gen|Col|Capt|Rev|vs|No|e\.g|i\.e)\.")
_DATE = re.compile(r"\b(?:in|on|during|since|circa|c)?\s*(?:(?:\d[\d,.]*|" + "|".join(_MONTHS) + r")\s*)+")
_MAX_PREDICATE_WORDS = 6


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    label: str
    possessive: bool = False  # "Hall's …": what follows is about something of his
    describes: bool = False  # "German", "Bollywood (actress X)": a mention, never one end of a relation


def _tidy(text: str) -> str:
    """Undo tokenised-corpus quirks (``quotes'', "did n't", "self - help") and abbreviation dots."""
    text = text.replace("``", '"').replace("''", '"')
    text = re.sub(r"(?<=\w) (n't|['’]s)\b", r"\1", text)
    text = re.sub(r"(?<=[a-z])\.(?=[A-Z][a-z])", ". ", text)  # "Auckland.The"
    text = re.sub(r"(?<=\w) - (?=\w)", "-", text).replace("peer reviewed", "peer-reviewed")
    text = re.sub(r"\s*(?:--|—)\s*|\s+–\s+", ", ", text)
    return _ABBREVIATION.sub(_abbreviation, text)  # "Dr. Kern" is not the end of a sentence


def _abbreviation(m: re.Match[str]) -> str:
    """The abbreviation without its dot, unless a name suffix ends the sentence ("Atari, Inc. The game")."""
    after = m.string[m.end():m.end() + 8].split()
    ends = m.group(1) in ("Inc", "Ltd", "Co", "Corp", "Jr", "Sr") and after and \
        (after[0] in _PRONOUNS or after[0] in ("The", "In", "This"))
    return m.group(0) if ends else m.group(1)


def _parts(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def _capital(token: str) -> bool:
    return token[:1].isupper() or (token.isupper() and len(token) > 1)


def _possessive(token: str) -> bool:
    return bool(re.search(r"\w['’]s$|s['’]$", token))


class _Title:
    """The document title and the ways a passage refers to it."""

    def __init__(self, title: str, text: str) -> None:
        self.label = normalise_label(title, possessive=False)
        base = re.sub(r"\s*\([^()]*\)$", "", self.label)
        qualifier = self.label[len(base):].strip(" ()").split()
        place = re.fullmatch(r"([^,]+), ((?:[A-Z][\w.&'-]*\s*)+)", base)  # "Warton, Lancaster" is "Warton"
        self.variants = [p for p in (_parts(base), _parts(re.sub(r"^(?:The|A|An)\s+", "", base)),
                                     _parts(place.group(1)) if place else []) if p]
        self.capitalised = base[:1].isupper()
        self.heads = {qualifier[-1].lower()} if qualifier and qualifier[-1].islower() else set()
        pattern = r"[\W_]+".join(map(re.escape, self.variants[0])) if self.variants else ""
        shout = self.label.endswith(("!", "?"))  # "… Arthur!" is not the end of a sentence
        found = re.finditer(rf"\b{pattern}\b" + (r"[!?]" if shout else ""), text, re.I) if pattern else []
        self.occurrences = [(m.start(), m.end() + shout) for m in found]
        if self.label and self.label == self.label.lower() and self.occurrences:  # a file name: "helios-grid"
            start, end = self.occurrences[0]
            self.label = normalise_label(text[start:end])

    def spans(self, tokens: list[str]) -> list[_Span]:
        """Where the sentence names the title, as written or as its opening pronoun or "The song"."""
        if not self.label:
            return []
        found: list[_Span] = []
        if tokens and tokens[0] in _PRONOUNS:
            found.append(_Span(0, 1, self.label, possessive=_PRONOUNS[tokens[0]]))
        elif len(tokens) > 1 and tokens[0] in ("The", "This") and _parts(tokens[1])[:1] and \
                _parts(tokens[1])[0] in self.heads:
            found.append(_Span(0, 2, self.label, possessive=_possessive(tokens[1])))
        i = found[0].end if found else 0
        while i < len(tokens):
            end = self._match(tokens, i)
            if end:
                found.append(_Span(i, end, self.label, possessive=_possessive(tokens[end - 1])))
            i = end or i + 1
        return found

    def fuller(self, label: str) -> bool:
        """A longer form of a name title: "Captain Christopher Edward Nolan II" for "Christopher Nolan"."""
        words = [w for w in label.split() if not (w.isupper() and len(w) > 1)]  # "… CIE", "… AM"
        words = [p for w in words for p in _parts(w) if p not in _SUFFIXES]
        while len(words) > 1 and words[0] in _HONORIFICS:
            words = words[1:]
        target = self.variants[0] if self.variants else []
        if len(target) < 2 or len(words) <= len(target) or words[0] != target[0] or words[-1] != target[-1]:
            return False
        rest = iter(words)
        return all(part in rest for part in target)

    def _match(self, tokens: list[str], i: int) -> int:
        """End of the title named at tokens[i], or 0. Not part of a longer name: "B Boy Records" is not
        "B Boy (song)"."""
        if (self.capitalised and not tokens[i][:1].isupper()) or \
                (i and _capital(tokens[i - 1]) and tokens[i - 1] not in ("The", "A", "An", "This")):
            return 0
        for target in self.variants:
            seen: list[str] = []
            for j in range(i, len(tokens)):
                seen += _parts(tokens[j])
                if seen == target or (seen[:-1] == target and seen[-1] == "s" and _possessive(tokens[j])):
                    return 0 if j + 1 < len(tokens) and _capital(tokens[j + 1]) else j + 1
                if len(seen) >= len(target):
                    break
        return 0


def _runs(tokens: list[str], taken: set[int], lowercase: set[str]) -> list[_Span]:
    """Runs of capitalised words, joined over connectors ("Bank of the West"), cut at a possessive."""
    found: list[_Span] = []
    i = 0
    while i < len(tokens):
        if i in taken or not _capital(tokens[i]) or _shouted(tokens[i], lowercase):
            i += 1
            continue
        j, named_of = i + 1, False
        while j < len(tokens) and j not in taken and not _cuts(tokens[j - 1]):
            if _capital(tokens[j]) and not _shouted(tokens[j], lowercase):
                j += 1
                continue
            k = j
            while k < len(tokens) and k - j < 2 and (tokens[k].lower() in _CONNECTORS or tokens[k].isdigit()):
                k += 1
            joined = tokens[j:k]
            if not (k > j and k < len(tokens) and k not in taken and _capital(tokens[k])):
                break
            if "and" in joined and not _one_name(tokens, i, j, k, named_of):
                break  # "Erik Erikson and Anna Freud" are two people; "Institute of X and Y" is one name
            named_of |= any(w in ("of", "for", "de") for w in joined)
            j = k
        if j < len(tokens) and tokens[j].isdigit() and len(tokens[j]) < 4 and tokens[j - 1].lower() not in _MONTHS:
            j += 1  # "Studio 33", "Apollo 11"
        span = _trim(tokens, i, j, lowercase)
        if span:
            found.append(span)
        i = j
    return found


def _shouted(token: str, lowercase: set[str]) -> bool:
    """An ordinary word in capitals ("Clients MAY also …"), not an acronym."""
    word = token.lower()
    return token.isupper() and len(token) > 1 and (
        word in _COMMON | _AUXILIARIES | _MONTHS | _OPENERS | _SHOUTED or word in lowercase)


def _cuts(token: str) -> bool:
    """A possessive ends a name ("Nolan's Batman"), unless it starts one ("Men's Studies Press")."""
    return _possessive(token) and normalise_label(token).lower() not in _NAME_POSSESSIVES


def _one_name(tokens: list[str], i: int, j: int, k: int, named_of: bool) -> bool:
    """Whether "… and …" at tokens[j:k] is inside one name rather than between two."""
    end = k
    while end < len(tokens) and _capital(tokens[end]):
        end += 1
    if named_of and end == k + 1:
        return True
    return tokens[end - 1].lower() in _ORGANISATIONS and tokens[j - 1].lower() not in _ORGANISATIONS


def _trim(tokens: list[str], i: int, j: int, lowercase: set[str]) -> _Span | None:
    """The run without leading common words ("The", "Featuring the"), or None if nothing is left
    that names anything."""
    while i < j and (tokens[i].lower() in _COMMON - {"new"} or tokens[i].lower() in _CONNECTORS | _MONTHS
                     or tokens[i].isdigit() or (i == 0 and _opener(tokens, i))):
        i += 1
    if i >= j:
        return None
    words = tokens[i:j]
    adjective = re.fullmatch(r"([A-Z][\w.]*)-[a-z]+", words[-1])  # "Los Angeles-based" names Los Angeles
    if adjective:
        words = words[:-1] + [adjective.group(1)]
    label = normalise_label(" ".join(words))
    word = normalise_label(words[0]).lower() if len(words) == 1 else ""
    if not label or (word and (len(word) < 2 or word in _COMMON | _MONTHS | _OPENERS or word in lowercase)):
        return None  # "MAY", "January", "Twelve", "Albums" when the passage also says "albums"
    demonym = all(p in _DEMONYMS for w in words for p in w.lower().split("-"))  # "Japanese Peruvian"
    return _Span(i, j, label, possessive=_possessive(tokens[j - 1]), describes=demonym)


def _opener(tokens: list[str], i: int) -> bool:
    """A sentence-opening word that is not a name: "Originally," "Featuring the …"."""
    word, after = tokens[i].lower(), tokens[i + 1].lower() if i + 1 < len(tokens) else ""
    if word.endswith(("ly", "ing")):
        return after == "," or after in _DETERMINERS | _PREPOSITIONS
    if len(word) > 4 and word.endswith("ed"):  # "Included on …", "Released six weeks later"
        return after == "," or after.isdigit() or after in _PREPOSITIONS | _DETERMINERS | _OPENERS
    return word in _OPENERS


def _adverb(word: str) -> bool:
    return word in _ADVERBS or (len(word) > 4 and word.endswith("ly"))


def _verb(word: str, first: bool) -> bool:
    if word in _VERBS:
        return True
    if word in _NOT_VERBS or not word.isalpha() or len(word) < 4:
        return False
    return word.endswith(("ed", "ing")) or (first and word.endswith("s") and not word.endswith(("ss", "us")))


def _clean(words: list[str]) -> list[str]:
    """Lower-cased joining words without dates ("released in 1999 by" → "released by")."""
    text = " ".join(w.lower() for w in words)
    text = _DATE.sub(" ", f" {text} ")
    words = text.split()
    while words and words[0] in ("which", "that", "who", "and", "but", ","):
        words = words[1:]
    while words and words[-1] in ("the", "a", "an"):
        words = words[:-1]
    return words


def _predicate(words: list[str]) -> str | None:
    """The joining words as a relation name, if they are a short phrase with a verb in it."""
    if any(w in ",;:" for w in words):
        return None
    words = _clean(words)
    if not 1 <= len(words) <= _MAX_PREDICATE_WORDS or all(w in _COMMON | _AUXILIARIES for w in words):
        return None
    if words[-1] in _DETERMINERS or words[0] in _DETERMINERS or any("'" in w or "’" in w for w in words):
        return None  # "also get a file's", "n't": not a relation between the two names
    if any(w in _DETERMINERS for w in words) and words[-1] not in _PREPOSITIONS:
        return None  # "forces an older": the object is a noun phrase the name does not finish
    if len(words) == 1 and words[0].endswith("ing") and words[0] not in ("starring", "featuring"):
        return None  # "having", "defeating": a clause fragment, not a relation
    lead = next((k for k, w in enumerate(words) if not _adverb(w)), 0)
    if not _verb(words[lead], first=True):
        return None  # "film produced by": the phrase is about a noun between the two names
    if not (words[-1] in _PREPOSITIONS | _PARTICLES or _verb(words[-1], first=len(words) - 1 == lead)):
        return None  # "struck southeastern", "returning cinematographer": the object is not the name
    return " ".join(words)


def _tail_phrase(words: list[str], after_verb: bool = False) -> str | None:
    """The verb phrase ending a longer stretch, perhaps before a short description of the object:
    "… a journal published monthly by" → "published by"; "… published by the American company".
    `after_verb`: the stretch follows the subject directly, so it must have a verb before the phrase
    ("Eastmarch data centre took over": the data centre took it over, not Eastmarch)."""
    words = _clean(words)
    for end in range(len(words), max(0, len(words) - 6), -1):
        if any(_verb(w, first=False) or w in _PREPOSITIONS | _AUXILIARIES for w in words[end:]):
            break
        i, preposition = end, []
        if i and words[i - 1] in _PREPOSITIONS:
            i, preposition = i - 1, [words[i - 1]]
            if end < len(words) and (whole := _predicate(words[:end])):
                return whole  # "was the father of [Bollywood actress] Antara Mali"
        elif end < len(words):
            continue  # a description of the object follows only "… by", "… of"
        while i and _adverb(words[i - 1]):
            i -= 1
        verb = words[i - 1] if i else ""
        if verb.endswith("ing") and verb not in ("starring", "featuring", "including") and \
                not (i > 1 and words[i - 2] in _AUXILIARIES):
            return None  # "his work in horse racing with": a noun, not what the subject does
        if i and _verb(words[i - 1], first=False) and words[i - 1] not in _AUXILIARIES:
            start = i - 1
            while start and words[start - 1] in _AUXILIARIES | _ADVERBS:
                start -= 1
            relative = max((k for k, w in enumerate(words[:start]) if w in ("which", "who", "that")), default=-1)
            if 0 <= relative < start - 1:
                return None  # "… by which immigrants are granted": the clause has its own subject
            if after_verb and not any(_verb(w, first=False) for w in words[:start]):
                return None
            return _predicate(words[start:i] + preposition)
    return None


def _kind(words: list[str]) -> str | None:
    """The kind after "is a": the noun phrase up to its head, at most four words.
    "fast, scalable, distributed revision control system with …" → "distributed revision control system"."""
    kept: list[str] = []
    for k, word in enumerate(words):
        low = word.lower()
        if word == ",":
            if kept and (kept[-1].lower() in _NOT_NOUNS or kept[-1].endswith(("ly", "ed", "able", "ive", "ous"))):
                continue  # a list of adjectives goes on
            break
        nxt = words[k + 1].lower() if k + 1 < len(words) else ""
        if word in ";:" or (low in _KIND_STOP and not (low == "of" and kept and kept[-1] in _VAGUE_HEADS)):
            break
        if kept and _verb(low, first=False) and low not in _AUXILIARIES and \
                kept[-1].lower() not in _NOT_NOUNS | _ADVERBS and not kept[-1].endswith("ly") and \
                (nxt in _PREPOSITIONS | _ADVERBS or nxt.endswith("ly") or not _nounish(nxt)):
            break  # "… journal published by", "… tournament held seven times"
        if kept and ((low.endswith("ing") and _verb(low, first=False) and _nounish(kept[-1])
                      and _clause(words[k + 1:])) or (low in _ADVERBS and _verb(nxt, first=False))):
            break  # "… journal covering microwave theory", "… journal first published …"
        if not low.replace(".", "").isdigit() and low not in ("a", "an", "the"):
            kept.append(word)
    if "of" in kept:  # "form of psychotherapy"
        at = kept.index("of")
        kept = kept[at - 1: at + 3] if at + 1 < len(kept) and kept[at + 1].islower() else kept[:at]
    start = max(0, len(kept) - 4)  # at most four words, and no half of a name ("a World War I flying ace")
    while start < len(kept) - 1 and kept[start][:1].isupper() and \
            ((start and kept[start - 1][:1].isupper()) or kept[start + 1][:1].isupper()):
        start += 1
    kept = kept[start:]
    while len(kept) > 1 and (kept[0].lower() in _NOT_NOUNS or kept[0].endswith("ly")):
        kept = kept[1:]  # "quarterly peer-reviewed journal" is a peer-reviewed journal
    if len(kept) == 1 and kept[0].endswith(("ible", "able", "ous", "ful", "less", "ive")):
        return None  # "is a terrible …"
    return " ".join(kept) if kept and _nounish(kept[-1]) else None


def _clause(words: list[str]) -> bool:
    """Whether the words after an "-ing" word are its object ("covering microwave theory, …") rather
    than the noun it qualifies ("publishing house based in …")."""
    count = 0
    for word in words:
        if word in ",;:" or word.lower() in _KIND_STOP or (_verb(word.lower(), first=False) and count):
            break
        count += 1
    return count != 1


def _nounish(word: str) -> bool:
    return (word.islower() and word not in _NOT_NOUNS | _COMMON | _ADVERBS and not word.endswith(("ly", "ed"))
            and not (word.endswith("ing") and "-" in word)
            and not word.replace(".", "").isdigit())


def _sentences(text: str, protected: list[tuple[int, int]]) -> list[str]:
    """Sentences, never split inside the title ("Arthur? Arthur!")."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        if any(a < m.start() < b for a, b in protected):
            continue
        out.append(text[start:m.start()])
        start = m.end()
    out.append(text[start:])
    return [s.strip(" \t\n#*-") for s in out if s.strip(" \t\n#*-")]


def _subject(tokens: list[str], spans: list[_Span]) -> _Span | None:
    """The sentence's subject: its first entity, if nothing but an article or an opening phrase
    ("In 1999, …") comes before it."""
    if not spans:
        return None
    first, before = spans[0], [t for t in tokens[:spans[0].start] if t != '"']
    if all(t.lower() in ("the", "a", "an") for t in before) or (before and before[-1] == ","):
        return first
    return None


def extract(text: str, title: str = "") -> Extraction:
    """Entities, definitions and relations of a passage; `title` names what the passage is about."""
    result = Extraction()
    text = _tidy(text)
    about = _Title(title, text)
    if about.label:
        result.definitions[about.label] = ""
    # Words written in lower case elsewhere are common words, not names, unless in a path ("services/skyline/"
    # does not make "Skyline" a common word).
    lowercase = set(re.findall(r"\b[a-z][\w'-]*", re.sub(r"\S*/\S*", " ", text)))
    surnames: dict[str, set[str]] = {}  # "Hall" -> {"G. Stanley Hall"}: a later "Hall" is that person
    _remember(surnames, re.sub(r"\s*\([^()]*\)$", "", about.label), about.label)
    sentences = _sentences(text, about.occurrences)
    naming = ""
    for sentence in sentences:
        for inner in re.findall(r"\(([^()]*)\)", sentence):  # aliases and asides: mentions only
            for span in _runs(_TOKEN.findall(inner), set(), lowercase):
                result.definitions.setdefault(span.label, "")
        tokens = _TOKEN.findall(_PARENTHETICAL.sub("", _PARENTHETICAL.sub("", sentence)))
        titled = about.spans(tokens)
        spans = _named(tokens, titled, about, lowercase, surnames)
        for span in spans:
            result.definitions.setdefault(span.label, "")
        if any(s.label == about.label and tokens[s.start] not in _PRONOUNS for s in titled):
            naming = naming or sentence
        subject = _subject(tokens, spans)
        copula = bool(subject and not subject.possessive and _define(result, subject.label, tokens[subject.end:],
                                                                     sentence))
        if copula and subject.label == about.label:  # later "The series …" is the title too
            about.heads |= {r.object.split()[-1] for r in result.relations
                            if r.subject == about.label and r.predicate == "is a"}
        _relate(result, tokens, [s for s in spans if not s.describes], subject, copula)
    if about.label and not result.definitions[about.label]:
        result.definitions[about.label] = naming or (sentences[0] if sentences else about.label)
        result.definition_confidence[about.label] = NAMING_SENTENCE if naming else OPENING_SENTENCE
    result.relations = strongest(result.relations)
    return result


def _named(tokens: list[str], titled: list[_Span], about: _Title, lowercase: set[str],
           surnames: dict[str, set[str]]) -> list[_Span]:
    """Every entity a sentence names, in order: the title, quoted titles of works, capitalised runs."""
    taken = {k for s in titled for k in range(s.start, s.end)}
    quoted = _quoted(tokens, taken)
    taken |= {k for s in quoted for k in range(s.start, s.end)}
    runs = _runs(tokens, taken, lowercase)
    spans = sorted(titled + quoted + runs, key=lambda s: s.start)
    spans = [replace(s, label=about.label) if about.fuller(s.label) else s for s in spans]
    starts = {s.start for s in spans}
    spans = [replace(s, describes=True) if s in runs and s.end + 1 in starts and _modifier(tokens[s.end]) else s
             for s in spans]  # "Bollywood actress Antara Mali": Bollywood only describes her
    for span in spans:
        _remember(surnames, span.label, span.label)
    return [_resolve(s, surnames) for s in spans]


def _modifier(word: str) -> bool:
    """A lower-case noun between a name and the next ("actress" in "Bollywood actress Antara Mali")."""
    return word.isalpha() and _nounish(word) and word not in _PREPOSITIONS | _DETERMINERS | _CONNECTORS \
        and not _verb(word, first=True)


def _quoted(tokens: list[str], taken: set[int]) -> list[_Span]:
    """Quoted titles of works: "All You Need Is Love" is one name, its small words included."""
    found, quotes = [], [k for k, t in enumerate(tokens) if t == '"']
    for left, right in zip(quotes[::2], quotes[1::2]):
        inner = tokens[left + 1:right]
        words = [w for w in inner if w[:1].isalpha()]
        if (len(words) > 1 and len(inner) <= 12 and inner[0][:1].isupper() and not taken & set(range(left, right))
                and all(w[:1].isupper() or len(w) <= 4 for w in words)):
            found.append(_Span(left + 1, right, normalise_label(re.sub(r" ([,;:])", r"\1", " ".join(inner)))))
    return found


def _remember(surnames: dict[str, set[str]], name: str, label: str) -> None:
    words = [w for w in name.split() if w.lower().strip(".") not in _SUFFIXES]
    if 1 < len(words) < 5 and all(w[:1].isupper() and w.lower() not in _CONNECTORS for w in words):
        surnames.setdefault(words[-1], set()).add(label)


def _resolve(span: _Span, surnames: dict[str, set[str]]) -> _Span:
    """A one-word name that ends exactly one longer name seen before is that name."""
    full = surnames.get(span.label, set())
    return replace(span, label=next(iter(full))) if " " not in span.label and len(full) == 1 else span


def _define(result: Extraction, label: str, rest: list[str], sentence: str) -> bool:
    """"X is a/the …" defines X; "X is a <kind> …" also says what kind of thing X is."""
    rest = [t for t in rest if t != '"']
    if rest[:1] == [","] and rest[1:2] and rest[1] in ("is", "was", "are", "were"):
        rest = rest[1:]
    elif rest[:1] == [","] and "," in rest[1:12]:  # "Demon Dice, originally published as …, is a …"
        rest = rest[rest.index(",", 1) + 1:]
    if len(rest) < 3 or rest[0] not in ("is", "was", "are", "were") or rest[1].lower() not in ("a", "an", "the"):
        return False
    if not result.definitions.get(label):
        result.definitions[label] = sentence
        result.definition_confidence[label] = COPULAR_DEFINITION
    kind = _kind(rest[2:]) if rest[1] != "the" else None
    if kind:
        result.relations.append(Relation(label, "is a", kind, COPULAR_KIND))
    return True


def _relate(result: Extraction, tokens: list[str], spans: list[_Span], subject: _Span | None,
            copula: bool = False) -> None:
    """Relations between neighbouring entities. A list after the object shares its relation
    ("starring A, B and C"); after "X is a …", "written by" is about X ("X is an ALA Notable Book
    written by Y"); so is a phrase after a comma ("X is a film in Malayalam, directed by Y")."""
    related = False
    last: Relation | None = None  # the relation a list after its object shares
    starts = {s.start for s in spans}  # "Quentin Tarantino's Jackie Brown": the film, not its director
    spans = [s for s in spans if not (s.possessive and s.end in starts and s is not subject)]
    for a, b in zip(spans, spans[1:]):
        gap = [t for t in tokens[a.end:b.start] if t != '"']
        cut = _last_break(gap)
        clause = gap[cut:]
        listed = gap in ([","], ["and"], [",", "and"], ["&"], ["or"])
        if last and last.object == a.label and listed and not _verb(_next_word(tokens, b), first=True):
            last = replace(last, object=b.label)
        elif cut and clause[:1] in (["who"], ["which"], ["that"]):  # "Hall, who was the first president of"
            predicate = _predicate(clause) or _tail_phrase(clause)
            last = Relation(a.label, predicate, b.label, RELATIVE_CLAUSE) if predicate and not a.possessive else None
        else:
            core = gap[:-1] if gap[-1:] == [","] else gap  # "a remake of the American film, "It …""
            owned = _owned(a, subject, copula, last, core, _last_break(core))
            last = Relation(owned[0], owned[1], b.label, owned[2]) if owned else None
        if last and slug(last.subject) != slug(last.object):
            result.relations.append(last)
            related = True
    distinct = list({slug(s.label): s.label for s in spans}.values())
    if not related and len(distinct) == 2:
        result.relations.append(Relation(distinct[0], "mentioned with", distinct[1], CO_OCCURRENCE))


def _owned(a: _Span, subject: _Span | None, copula: bool, last: Relation | None, gap: list[str],
           cut: int) -> tuple[str, str, Confidence] | None:
    """(subject label, predicate, the rule's strength) of what the words between `a` and the next
    entity say about it."""
    predicate = None if a.possessive else _predicate(gap)
    if predicate and re.match(r"(?:is|was|are|were) (?:a|an|the) ", predicate):  # "is a film directed by"
        predicate = _tail_phrase(gap) or (predicate if predicate.split()[-1] in _PREPOSITIONS else None)
    lead = next((w for w in (predicate or "").split() if not _adverb(w)), "")
    if predicate and lead not in _VERBS and not lead.endswith(("ed", "ing")) and a is not subject:
        predicate = None  # "Bollywood actresses", "US cities as well as in": a guessed verb needs the subject
    strength = VERB_PHRASE
    if predicate:
        shared = last and last.object == a.label and gap[0] == "and"  # "by A and starring B"
        owner = last.subject if shared else a.label
    else:
        predicate, strength = _tail_phrase(gap[cut:], after_verb=not cut), TAIL_PHRASE
        if cut and subject and not subject.possessive:
            owner = subject.label
        else:
            owner = None if a.possessive else a.label
    if copula and subject and a is not subject and (re.fullmatch(r"\w+ by", predicate or "")
                                                    or predicate in ("starring", "featuring")):
        owner = subject.label
    return (owner, predicate, strength) if owner and predicate else None


def _next_word(tokens: list[str], span: _Span) -> str:
    """The word after a span, lower-cased ("" at the end): a verb there makes the span a new subject."""
    return tokens[span.end].lower() if span.end < len(tokens) else ""


def _last_break(gap: list[str]) -> int:
    """Index just after the last punctuation mark of a gap (0 if there is none)."""
    return max((k + 1 for k, w in enumerate(gap) if w in ",;:"), default=0)
