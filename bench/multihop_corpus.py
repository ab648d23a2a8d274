"""A seeded software-architecture world written as prose, with multi-hop questions whose gold facts are
exactly what the offline extractor finds in it: the evaluation data for GraphRAG retrieval quality.
Run it to print counts and to check every sentence and every gold fact against the offline extractor (`base/extraction`)."""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tracegraph.base.provenance.uris import slug
from tracegraph.base.extraction.reader import extract_text

Fact = tuple[str, str, str]
HERE = Path(__file__).resolve().parent
SAMPLE_GOLD = HERE / "data" / "sample_corpus_gold.json"
SAMPLE_CORPUS = HERE.parent / "launch" / "corpus"

# -- word lists: every word capitalised, none a connector or common word the extractor would strip ---------

TEAMS = "Falcon Heron Lynx Otter Marlin Kestrel Badger Condor Puffin Bison Gecko Orca Ibis Walrus".split()
FIRST = ("Priya Tomas Amara Kenji Lucia Dmitri Noor Felix Ingrid Mateo Aisha Oskar Elena Ravi Sofia Jonah "
         "Mei Tariq Greta Kwame Hana Bruno").split()
LAST = ("Raman Novak Okafor Tanaka Ferreira Volkov Haddad Brandt Lund Alvarez Siddiqui Berg Petrova Iyer "
        "Moreau Castell Chen Rahimi Strand Mensah Varga Quinn").split()
DOMAINS = ("Payment Ledger Invoice Catalog Checkout Identity Session Billing Pricing Inventory Shipping Refund "
           "Fraud Audit Metrics Notification Profile Consent Quota Feature Media Upload Report Search Tax "
           "Loyalty Coupon Routing Tracking Booking Webhook Ranking Wallet Payout Settlement Currency Address "
           "Geocode Thumbnail Transcode Secret Token Certificate License Basket Receipt Dispute").split()
ROLES = ("Gateway Service Engine Router Scorer Broker Proxy Worker Scheduler Indexer Api Dispatcher Validator "
         "Resolver Collector Aggregator Planner Publisher Tracker Registry").split()
CODENAMES = "Orchid Cobalt Juniper Saffron Quartz Tundra Ember Willow Nimbus Harbor Sparrow Topaz".split()
STORE_ROLES = "Store Vault Lake Cache Archive Depot".split()
HOST_NAMES = "Granite Basalt Cedar Alder Slate Quarry Summit Meadow Delta Aurora Obsidian Fjord".split()
HOST_ROLES = "Cluster Node Pool Rack".split()
SERVICE_KINDS = ["stateless api", "batch worker", "stream processor", "edge proxy", "job scheduler",
                 "rules engine", "message broker", "web service"]
STORE_KINDS = ["relational datastore", "document store", "key-value cache", "object store", "search index",
               "time-series database"]
HOST_KINDS = ["kubernetes cluster", "bare-metal pool", "virtual machine fleet"]

# One relation per sentence, the sentence opening with its subject (or a common word the extractor drops).
PHRASES = {
    "depends on": ["{s} depends on {o}.", "{s} depends on {o} for most of its work.",
                   "The {s} depends on the {o} at startup."],
    "calls": ["{s} calls {o}.", "{s} calls {o} on every request.", "In the request path, {s} calls {o}."],
    "is owned by": ["{s} is owned by {o}.", "The {s} is owned by {o}.",
                    "{s} is owned by {o} after the last reorganisation."],
    "is maintained by": ["{s} is maintained by {o}.", "In practice, {s} is maintained by {o}."],
    "runs on": ["{s} runs on {o}.", "In production, {s} runs on {o}.", "{s} runs on {o} in three zones."],
    "stores data in": ["{s} stores data in {o}.", "{s} stores data in {o} with nightly snapshots."],
    "reports to": ["{s} reports to {o}.", "{s} reports to {o} in the current org chart."],
    "is led by": ["{s} is led by {o}.", "{s} is led by {o} this year."],
    "is a": ["{s} is {art} {o}.", "{s} is {art} {o} that rarely changes."],
}
GOLD_PREDICATES = frozenset(PHRASES)
# Mentions without a gold fact: one entity, or two joined by a predicate no question uses.
FILLER_ONE = ["{a} had two minor incidents last quarter.", "{a} has an open ticket about noisy alerts.",
              "{a} publishes its latency figures on the shared dashboard.",
              "The runbook for {a} was rewritten after the spring outage.",
              "{a} keeps its deployment manifests in the platform repository.",
              "The error budget of {a} was exhausted twice this year.",
              "{a} was last load tested before the winter freeze."]
FILLER_TWO = ["{a} was benchmarked against {b} during capacity planning.", "{a} shares a deployment window with {b}.",
              "{a} used to depend on {b} before the migration.", "{a}, like {b}, emits structured logs.",
              "{p} reviewed the design of {a}.", "{p} wrote the original proposal for {a}.",
              "{t} presented {a} at the architecture forum."]
FILLER_PERSON = ["{a} joined the company four years ago.", "{a} mentors two new engineers this year.",
                 "{a} runs the weekly architecture review.", "{a} wrote the original proposal for {b}.",
                 "{a} reviewed the design of {b}.", "{a} is on the incident rota this month."]
FILLER_TEAM = ["{a} holds its planning meeting every second week.", "{a} presented {b} at the architecture forum.",
               "{a} moved to the new office floor in the spring.", "{a} has a shared inbox for support requests."]


@dataclass
class World:
    """Entities by kind, and every gold-bearing fact with the document it is written into."""

    teams: list[str]
    people: list[str]
    hosts: list[str]
    datastores: list[str]
    services: list[str]
    facts: dict[Fact, str] = field(default_factory=dict)

    def add(self, fact: Fact, document: str) -> None:
        self.facts.setdefault(fact, document)

    def objects(self) -> dict[tuple[str, str], list[str]]:
        found: dict[tuple[str, str], list[str]] = defaultdict(list)
        for s, p, o in self.facts:
            found[s, p].append(o)
        return found

    def labels(self) -> set[str]:
        return {x for s, _, o in self.facts for x in (s, o)}


def _names(rng: random.Random, firsts: list[str], seconds: list[str], n: int, taken: set[str],
           prefixes: tuple[str, ...] = ()) -> list[str]:
    names: list[str] = []
    while len(names) < n:
        name = f"{rng.choice(firsts)} {rng.choice(seconds)}"
        if prefixes and rng.random() < 0.25:
            name = f"{rng.choice(prefixes)} {name}"
        if name not in taken:
            taken.add(name)
            names.append(name)
    return names


def build_world(seed: int = 7) -> World:
    """12 teams, 20 people (2 directors, 12 leads, 6 engineers), 10 hosts, 14 datastores, 58 services."""
    rng = random.Random(seed)
    taken: set[str] = set()
    people = [f"{a} {b}" for a, b in zip(rng.sample(FIRST, 20), rng.sample(LAST, 20))]  # no shared first or last names
    world = World(teams=[f"Team {w}" for w in rng.sample(TEAMS, 12)], people=people,
                  hosts=_names(rng, HOST_NAMES, HOST_ROLES, 10, taken),
                  datastores=_names(rng, DOMAINS, STORE_ROLES, 14, taken),
                  services=_names(rng, DOMAINS, ROLES, 58, taken, tuple(CODENAMES)))
    directors, leads, engineers = people[:2], people[2:14], people[14:]
    crew = {team: [leads[i]] + engineers[i:i + 1] for i, team in enumerate(world.teams)}
    catalogue = {t: f"{t} service catalogue" for t in world.teams}
    runbook = {t: f"{t} runbook" for t in world.teams}
    divisions = ["The platform division", "The product division"]
    for i, team in enumerate(world.teams):
        world.add((team, "is led by", leads[i]), catalogue[team])
        world.add((leads[i], "reports to", directors[i % 2]), divisions[i % 2])
        if i < len(engineers):
            world.add((engineers[i], "reports to", leads[i]), divisions[i % 2])
    for host in world.hosts:
        owner = rng.choice(world.teams[:3])
        world.add((host, "is a", rng.choice(HOST_KINDS)), runbook[owner])
        world.add((host, "is owned by", owner), runbook[owner])
    for store in world.datastores:
        owner = rng.choice(world.teams)
        world.add((store, "is a", rng.choice(STORE_KINDS)), runbook[owner])
        world.add((store, "is owned by", owner), runbook[owner])
        world.add((store, "runs on", rng.choice(world.hosts)), runbook[owner])
    for i, service in enumerate(world.services):
        owner = world.teams[i % len(world.teams)]
        later = world.services[i + 1:]
        world.add((service, "is a", rng.choice(SERVICE_KINDS)), catalogue[owner])
        world.add((service, "is owned by", owner), catalogue[owner])
        world.add((service, "is maintained by", rng.choice(crew[owner])), catalogue[owner])
        needs = rng.sample(later, min(len(later), rng.choice([0, 1, 1, 1, 2])))
        for other in needs:  # only later services: the dependency graph has no cycles
            world.add((service, "depends on", other), catalogue[owner])
        callable_ = [s for s in later if s not in needs]
        for other in rng.sample(callable_, min(len(callable_), rng.choice([0, 1, 1, 2]))):
            world.add((service, "calls", other), catalogue[owner])
        world.add((service, "runs on", rng.choice(world.hosts)), runbook[owner])
        if rng.random() < 0.75:
            world.add((service, "stores data in", rng.choice(world.datastores)), runbook[owner])
    return world


# -- prose -------------------------------------------------------------------------------------------------

Sentence = tuple[str, Fact | None]  # the text, and the one fact it states (None for filler)


@dataclass
class Document:
    title: str
    paragraphs: list[list[Sentence]]

    def text(self) -> str:
        body = "\n\n".join(" ".join(s for s, _ in p) for p in self.paragraphs)
        return f"# {self.title}\n\n{body}\n"


def _sentence(rng: random.Random, fact: Fact) -> str:
    s, p, o = fact
    art = "an" if o[0] in "aeiou" else "a"
    return rng.choice(PHRASES[p]).format(s=s, o=o, art=art)


def _filler(rng: random.Random, world: World, near: list[str], used: set[str]) -> str:
    components = world.services + world.datastores
    while True:  # a document never repeats a sentence
        a = rng.choice(near)
        b = rng.choice([c for c in components if c != a])
        template = rng.choice(FILLER_PERSON if a in world.people else FILLER_TEAM if a in world.teams
                              else FILLER_ONE + FILLER_TWO)
        sentence = template.format(a=a, b=b, p=rng.choice(world.people), t=rng.choice(world.teams))
        if sentence not in used:
            used.add(sentence)
            return sentence


def compose(seed: int = 7) -> list[Document]:
    """The world as documents: two per team, two per division, four incident write-ups of filler only."""
    world = build_world(seed)
    rng = random.Random(seed * 1000 + 1)
    by_document: dict[str, dict[str, list[Fact]]] = defaultdict(lambda: defaultdict(list))
    for fact, title in world.facts.items():
        by_document[title][fact[0]].append(fact)
    titles = list(by_document) + [f"The {topic} incident" for topic in
                                  ("checkout latency", "nightly batch", "certificate expiry", "storage quota")]
    documents = []
    for title in titles:
        paragraphs: list[list[Sentence]] = []
        used: set[str] = set()
        for subject, facts in by_document.get(title, {}).items():
            paragraph: list[Sentence] = [(_sentence(rng, f), f) for f in facts]
            for _ in range(rng.choice([0, 1, 1, 2])):
                paragraph.insert(rng.randrange(1, len(paragraph) + 1), (_filler(rng, world, [subject], used), None))
            paragraphs.append(paragraph)
        near = list(by_document.get(title, {})) or rng.sample(world.services, 6)
        target = rng.randint(170, 260)
        while sum(len(s.split()) for p in paragraphs for s, _ in p) < target:
            paragraphs.append([(_filler(rng, world, near, used), None) for _ in range(rng.randint(2, 4))])
        documents.append(Document(title, paragraphs))
    return documents


def documents(seed: int = 7) -> list[tuple[str, str]]:
    """(title, markdown text) of every generated document."""
    return [(d.title, d.text()) for d in compose(seed)]


def write_corpus(folder: str | Path, seed: int = 7) -> list[Path]:
    """Write the documents as `<slug>.md` files, ready for the ingest CLI."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for title, text in documents(seed):
        path = folder / f"{slug(title)}.md"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


# -- questions ---------------------------------------------------------------------------------------------

# (predicates along the chain, type, phrasings); {0} is the entity the chain starts from.
SHAPES: list[tuple[tuple[str, ...], str, list[str]]] = [
    (("depends on", "is owned by"), "ownership", [
        "Which team owns the service that {0} depends on?", "{0} depends on one other component. Which team owns it?",
        "Who is responsible for the component that {0} relies on?"]),
    (("depends on", "is maintained by"), "ownership", [
        "Who maintains the service {0} depends on?", "Which engineer looks after the dependency of {0}?"]),
    (("depends on", "runs on"), "dependency", [
        "On which host does the dependency of {0} run?", "Where does the service that {0} depends on run?"]),
    (("depends on", "stores data in"), "dependency", [
        "Which datastore holds the data of the service {0} depends on?",
        "{0} depends on a service; where does that service store its data?"]),
    (("depends on", "is a"), "factual", [
        "What kind of component does {0} depend on?", "What type of system is the dependency of {0}?"]),
    (("calls", "is owned by"), "ownership", [
        "Which team owns the service that {0} calls?", "{0} calls another service. Which team owns that service?"]),
    (("calls", "runs on"), "dependency", [
        "Which host runs the service called by {0}?", "Where does the service that {0} calls run?"]),
    (("calls", "is maintained by"), "ownership", [
        "Who maintains the service that {0} calls?", "Which engineer looks after the service called by {0}?"]),
    (("stores data in", "is owned by"), "ownership", [
        "Which team owns the datastore {0} stores data in?", "Who owns the datastore behind {0}?"]),
    (("stores data in", "runs on"), "factual", [
        "On which host does the datastore used by {0} run?", "Where is the datastore of {0} hosted?"]),
    (("stores data in", "is a"), "factual", [
        "What kind of datastore does {0} store its data in?", "What type of store keeps the data of {0}?"]),
    (("is owned by", "is led by"), "ownership", [
        "Who leads the team that owns {0}?", "Who is the lead of the team owning {0}?"]),
    (("is maintained by", "reports to"), "ownership", [
        "Who does the maintainer of {0} report to?", "Who manages the engineer that maintains {0}?"]),
    (("runs on", "is owned by"), "factual", [
        "Which team owns the host that {0} runs on?", "Who is responsible for the machines {0} runs on?"]),
    (("runs on", "is a"), "factual", [
        "What kind of infrastructure does {0} run on?", "What sort of host is {0} deployed to?"]),
    (("is led by", "reports to"), "ownership", [
        "Who does the lead of {0} report to?", "Whom does the person leading {0} report to?"]),
    (("depends on", "is owned by", "is led by"), "ownership", [
        "Who leads the team that owns the service {0} depends on?",
        "{0} depends on a service; who is the lead of the team that owns it?"]),
    (("stores data in", "is owned by", "is led by"), "ownership", [
        "Who leads the team that owns the datastore {0} stores data in?",
        "Who is the lead of the team owning the datastore behind {0}?"]),
    (("calls", "is maintained by", "reports to"), "ownership", [
        "Who manages the engineer maintaining the service that {0} calls?",
        "Who does the maintainer of the service called by {0} report to?"]),
    (("depends on", "depends on", "is owned by"), "dependency", [
        "Which team owns the second-level dependency of {0}?",
        "{0} depends on a service that itself depends on one more. Which team owns that last one?"]),
    (("depends on", "stores data in", "runs on"), "dependency", [
        "On which host does the datastore of the service {0} depends on run?",
        "Where is the datastore hosted that the dependency of {0} stores data in?"]),
    (("depends on", "runs on", "is owned by"), "dependency", [
        "Which team owns the host running the service {0} depends on?",
        "Who is responsible for the machines that the dependency of {0} runs on?"]),
    (("is owned by", "is led by", "reports to"), "ownership", [
        "Who does the lead of the team owning {0} report to?",
        "Whom does the person leading the team that owns {0} report to?"]),
    (("is maintained by", "reports to", "reports to"), "ownership", [
        "Who is two levels above the maintainer of {0} in the reporting line?",
        "Who is the manager of the manager of the engineer maintaining {0}?"]),
    (("calls", "stores data in", "is a"), "factual", [
        "What kind of datastore does the service called by {0} store its data in?",
        "What type of store keeps the data of the service {0} calls?"]),
    (("stores data in", "runs on", "is owned by"), "factual", [
        "Which team owns the host of the datastore {0} stores data in?",
        "Who is responsible for the machines under the datastore behind {0}?"]),
]


def chains(world: World, predicates: tuple[str, ...]) -> list[list[Fact]]:
    """Every chain along `predicates` whose each hop has exactly one object (so the gold set is exact)."""
    objects = world.objects()
    found = []
    for start in sorted({s for s, p in objects if p == predicates[0]}):
        chain, here = [], start
        for p in predicates:
            targets = objects.get((here, p), [])
            if len(targets) != 1:
                break
            chain.append((here, p, targets[0]))
            here = targets[0]
        visited = [start] + [o for _, _, o in chain]
        if len(chain) == len(predicates) and len(set(visited)) == len(visited):
            found.append(chain)
    return found


def questions(seed: int = 7, two_hop: int = 150, three_hop: int = 110) -> list[dict]:
    """Multi-hop questions, shapes taken in turn so that none dominates, phrasing picked per question."""
    world = build_world(seed)
    rng = random.Random(seed * 1000 + 2)
    result: list[dict] = []
    for hops, quota in ((2, two_hop), (3, three_hop)):
        pools = []
        for predicates, kind, phrasings in SHAPES:
            if len(predicates) == hops:
                pool = chains(world, predicates)
                rng.shuffle(pool)
                pools.append((pool, kind, phrasings))
        taken = 0
        while taken < quota and any(pool for pool, _, _ in pools):
            for pool, kind, phrasings in pools:
                if pool and taken < quota:
                    chain = pool.pop()
                    result.append({"id": f"mh-{len(result) + 1:04d}", "hops": hops, "type": kind,
                                   "question": rng.choice(phrasings).format(chain[0][0]),
                                   "gold": [list(f) for f in chain], "answer": chain[-1][2]})
                    taken += 1
    return result


# -- checks ------------------------------------------------------------------------------------------------

def _relations(text: str) -> list[Fact]:
    return [(r.subject, r.predicate, r.object) for r in extract_text(text, markdown=False).relations]


def check_sentences(docs: list[Document], world: World) -> list[str]:
    """Problems: a fact sentence that does not extract to exactly its fact, or filler that states a gold
    predicate or names something outside the world."""
    known = world.labels()
    problems = []
    for doc in docs:
        for sentence, fact in (s for p in doc.paragraphs for s in p):
            found = _relations(sentence)
            if fact is not None and found != [fact]:
                problems.append(f"{sentence!r} gives {found}, not {fact}")
            if fact is None:
                stray = [f for f in found if f[1] in GOLD_PREDICATES or not {f[0], f[2]} <= known]
                if stray:
                    problems.append(f"filler {sentence!r} gives {stray}")
    return problems


def check_questions(texts: list[str], items: list[dict], label: str) -> list[str]:
    """Problems: a gold fact the extractor does not produce from `texts`, or a hop that is not unique there."""
    found = {f for text in texts for f in _relations(text)}
    objects: dict[tuple[str, str], set[str]] = defaultdict(set)
    for s, p, o in found:
        objects[s, p].add(o)
    problems = []
    for item in items:
        for s, p, o in item["gold"]:
            if (s, p, o) not in found:
                problems.append(f"{label} {item['id']}: gold fact {(s, p, o)} is not extracted")
            elif len(objects[s, p]) != 1 and item.get("corpus") != "sample":
                problems.append(f"{label} {item['id']}: {s!r} {p!r} is ambiguous: {sorted(objects[s, p])}")
        if item["answer"] not in (item["gold"][-1][0], item["gold"][-1][2]):
            problems.append(f"{label} {item['id']}: the answer is not in the last gold fact")
    return problems


def chunk_texts(texts: list[str], size: int = 1000, overlap: int = 100) -> list[str]:
    """The documents as the chunker cuts them (markdown, the default size and overlap)."""
    from tracegraph.flow.chunker import split
    return [chunk for text in texts for _, chunk in split(text, size, overlap, markdown=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", metavar="FOLDER", help="also write the documents as markdown files here")
    parser.add_argument("--questions-out", metavar="PATH", help="also write the questions as JSON here")
    args = parser.parse_args()

    world, docs, items = build_world(args.seed), compose(args.seed), questions(args.seed)
    texts = [d.text() for d in docs]
    words = [len(t.split()) for t in texts]
    print(f"documents {len(docs)} (words {min(words)}-{max(words)}, total {sum(words)}); "
          f"world facts {len(world.facts)}; extracted relations {len({f for t in texts for f in _relations(t)})}")
    print(f"entities: {len(world.teams)} teams, {len(world.people)} people, {len(world.services)} services, "
          f"{len(world.datastores)} datastores, {len(world.hosts)} hosts")
    print(f"questions {len(items)}: by hops {dict(sorted(Counter(q['hops'] for q in items).items()))}, "
          f"by type {dict(sorted(Counter(q['type'] for q in items).items()))}")

    problems = check_sentences(docs, world) + check_questions(texts, items, "synthetic")
    sample = json.loads(SAMPLE_GOLD.read_text(encoding="utf-8"))
    sample_texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE_CORPUS.glob("*.md"))]
    problems += check_questions(sample_texts, sample, "sample")
    print(f"sample corpus questions {len(sample)}: by hops {dict(sorted(Counter(q['hops'] for q in sample).items()))}")
    missing = check_questions(chunk_texts(texts), items, "synthetic (chunked)")
    print(f"per-chunk extraction (1000/100): {len(missing)} gold facts missing or ambiguous")
    problems += missing
    if args.write:
        print(f"wrote {len(write_corpus(args.write, args.seed))} documents to {args.write}")
    if args.questions_out:
        Path(args.questions_out).write_text(json.dumps(items, indent=1), encoding="utf-8")
    if problems:
        print(f"FAILED: {len(problems)} problems", *problems[:30], sep="\n  ", file=sys.stderr)
        sys.exit(1)
    print("ok: every sentence extracts to its fact; every gold fact is extracted and every hop is unique")


if __name__ == "__main__":
    main()
