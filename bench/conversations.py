"""A seeded generator of multi-session conversations between two people, with labelled questions (issue 22).

    .venv/bin/python bench/conversations.py [--seed 22] [--conversations 24] [--out bench/data/conversations.json]

The shape follows the public long-conversation benchmarks: two friends talk in
sessions weeks apart over about a year; each turn is "Speaker: text" dated by its
session. Life events (a pet, a job, a move, an instrument, a race, a trip, …) are
told once in a turn that is the *evidence*, in words chosen to differ from the
questions' ("brought home a little beagle" for "adopt a dog"). Around them:
chit-chat, follow-ups that repeat an event's rare name without answering a
question about it, the other speaker's reactions, and distractors that share
words with events ("my cousin's dog", "I always wanted to learn the cello").
Jobs, homes and cars change over time, so "where did X work in May 2023?" has
one right session.

Each conversation is also given as observation sentences, one per informative
turn ("Caroline adopted a dog named Rex in May 2023."), with its source turn.

Questions, with their evidence turns:
- ``single_hop``: one turn answers it; some name the event's rare word (BM25's
  strength), some only paraphrase it (dense search's).
- ``multi_hop``: two turns: the person who works at X, their pet; did both visit Y.
- ``temporal``: "when did …" (the event's turn) and "what was true in <month>"
  (the statement that held then, not the later update).
- ``open_domain``: a question about a kind of thing ("Is X into music?") whose
  evidence is every turn that tells such an event.

The split is by conversation and fixed: the first half tunes, the second half is held out.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "bench" / "data" / "conversations.json"
SEED = 22

PEOPLE = [
    ("Caroline", "she"), ("Melanie", "she"), ("Joaquín", "he"), ("Ingrid", "she"), ("Tobias", "he"),
    ("Oyelaran", "he"), ("Mirela", "she"), ("Dashiell", "he"), ("Saoirse", "she"), ("Kwabena", "he"),
    ("Thandiwe", "she"), ("Evander", "he"), ("Ximena", "she"), ("Radomir", "he"), ("Linnea", "she"),
    ("Bartholomew", "he"), ("Yusra", "she"), ("Casimir", "he"), ("Anneliese", "she"), ("Tenzing", "he"),
    ("Marisol", "she"), ("Fitzgerald", "he"), ("Ottilie", "she"), ("Leopold", "he"), ("Sunniva", "she"),
    ("Ignatius", "he"), ("Rosalind", "she"), ("Obadiah", "he"), ("Esperanza", "she"), ("Lysander", "he"),
    ("Wilhelmina", "she"), ("Anselm", "he"), ("Dagny", "she"), ("Cormac", "he"), ("Henrietta", "she"),
    ("Emeka", "he"), ("Philippa", "she"), ("Augustin", "he"), ("Nkechi", "she"), ("Florian", "he"),
    ("Genevieve", "she"), ("Torvald", "he"), ("Imogen", "she"), ("Balthazar", "he"), ("Clementine", "she"),
    ("Rasmus", "he"), ("Perpetua", "she"), ("Quentin", "he"),
]  # fmt: skip
PET_NAMES = [
    "Zephyr", "Biscuit", "Marmalade", "Pistachio", "Quasar", "Noodle", "Juniper", "Mochi", "Tiberius",
    "Figaro", "Pumpernickel", "Waffles", "Saffron", "Ziggy", "Clementine", "Gnocchi", "Bramble", "Nimbus",
]  # fmt: skip
SPECIES = [
    ("dog", ["beagle", "little terrier", "rescue pup", "greyhound"]),
    ("cat", ["tabby kitten", "ginger kitten", "shy little calico"]),
    ("rabbit", ["lop-eared bunny", "tiny bunny"]),
    ("parrot", ["African grey", "chatty little parakeet"]),
    ("tortoise", ["Greek tortoise", "slow little shelled guy"]),
]
COMPANIES = [
    "Quillfeather Analytics", "Brannock Tools", "Vellichor Games", "Halcyon Dental", "Marrowbone Brewing",
    "Lumenhaus Architects", "Corvid Logistics", "Peregrine Insurance", "Thistledown Bakery", "Orrery Labs",
    "Kestrel Pharmacy", "Saltmarsh Books", "Ironwood Robotics", "Wickham & Pryce", "Starling Credit Union",
]  # fmt: skip
ROLES = ["data analyst", "nurse", "carpenter", "accountant", "product designer", "line cook", "teacher", "paralegal"]
CITIES = [
    "Tallinn", "Porto", "Leeds", "Ljubljana", "Halifax", "Tucson", "Adelaide", "Gdańsk", "Bergen", "Asheville",
    "Valparaíso", "Trondheim", "Galway", "Dunedin",
]  # fmt: skip
INSTRUMENTS = ["cello", "ukulele", "bassoon", "banjo", "harp", "accordion", "saxophone", "mandolin"]
TEACHERS = ["Mrs. Okonkwo", "Mr. Lindqvist", "Ms. Abernathy", "Mr. Castellanos", "Ms. Varga"]
RACES = [
    ("the Ridgeback half marathon", "half marathon"), ("the Foxhollow 10K", "10K"),
    ("the Lakeshore marathon", "marathon"), ("the Cinder Trail ultra", "ultramarathon"),
]  # fmt: skip
PLACES = [
    ("Lofoten", "to see the northern lights"), ("Kyoto", "for the cherry blossoms"),
    ("Oaxaca", "for the Day of the Dead"), ("Patagonia", "to hike"), ("Zanzibar", "for a friend's wedding"),
    ("Reykjavík", "for a music festival"), ("Cappadocia", "to ride in a hot-air balloon"),
    ("Tasmania", "to go camping"),
]  # fmt: skip
BOOKS = [
    ("The Salt Orchard", "Imre Kovach"), ("Lanterns Under Water", "Dela Rosario"),
    ("A Map of Small Hours", "Piet Vandermeer"), ("The Glass Cartographer", "Amara Osei"),
    ("Nine Winters in Hollowmere", "Signe Aalto"), ("The Last Apiarist", "Hugo Mbeki"),
]  # fmt: skip
CARS = ["a used Volvo estate", "a red Mazda hatchback", "an electric Kia", "a vintage Saab 900", "a Subaru Outback"]
COURSES = [
    ("pottery", "the Elmstead community college"), ("Portuguese", "the Lisbon Institute's evening school"),
    ("woodworking", "the Barnacle Street makerspace"), ("astronomy", "the Wexford observatory"),
    ("sign language", "the Deaf Centre on Colyer Road"),
]  # fmt: skip
VOLUNTEER = ["the Harborview food bank", "the Saint Brigid animal shelter", "the Millbrook youth centre"]
BANDS = [
    ("The Velvet Orchards", "the Roundhouse"), ("Kettle & Crow", "Brixton Academy"),
    ("Sombrero Galáctico", "the Paradiso"),
]  # fmt: skip
SIBLINGS = ["Persephone", "Algernon", "Benedetta", "Thaddeus", "Ysolde", "Crispin"]
MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip

CHIT_CHAT = [
    "Hey! It's been a while, how have you been?", "Haha that's so true.", "Honestly this week has been a blur.",
    "I've been so busy lately with everything going on.", "Anyway, enough about me, what's new with you?",
    "That sounds lovely, I'm really happy for you.", "Oh wow, I did not expect that!", "Same here, to be honest.",
    "Let's catch up again soon, okay?", "Talk soon! Take care of yourself.", "I know, right? Time flies.",
    "Ugh, Mondays. You know how it is.", "The weather has been awful here, rain every single day.",
    "I finally got a good night's sleep for once.", "I've been binge-watching a baking show, no regrets.",
    "Thanks for asking, things are pretty calm at the moment.", "Good to hear from you!",
    "Sorry I went quiet, life got hectic.", "That made me laugh out loud.", "We should plan something fun.",
    "I made way too much soup again.", "My phone screen cracked, so I'm typing slowly, sorry!",
    "Did you see that sunset yesterday? Unreal.", "I've been trying to drink more water, it's harder than it sounds.",
]  # fmt: skip
REACTIONS = [
    "No way, that's amazing!", "Wow, congratulations!", "That's wonderful news.", "Oh I love that for you.",
    "How exciting! Tell me more.", "That must have felt great.", "You deserve it, honestly.",
]  # fmt: skip


@dataclass
class Turn:
    id: str
    session: int
    date: str  # ISO date of the session
    speaker: str
    text: str

    @property
    def as_fact(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass
class Observation:
    id: str
    text: str
    date: str
    source_turn: str


@dataclass
class Question:
    id: str
    kind: str  # single_hop / multi_hop / temporal / open_domain
    question: str
    answer: str
    evidence: list[str]  # turn ids


@dataclass
class Conversation:
    id: str
    split: str  # tune / heldout
    speakers: list[str]
    turns: list[Turn] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


@dataclass
class Event:
    """One thing that happened to a speaker: the turn that tells it, its observation, its questions."""

    kind: str
    person: str
    text: str
    observation: str
    category: str  # for open-domain questions
    questions: list[tuple[str, str, str]]  # (kind, question, answer)
    when_question: str  # "When did Caroline adopt her dog?"
    follow_ups: list[str] = field(default_factory=list)  # later turns that repeat its words
    reactions: list[str] = field(default_factory=list)
    slot: str = ""  # for changing attributes: job / home / car
    value: str = ""
    turn_id: str = ""
    date: dt.date | None = None


def _month(date: dt.date) -> str:
    return f"{MONTHS[date.month - 1]} {date.year}"


def _pick(rng: random.Random, options: list[str]) -> str:
    return options[rng.randrange(len(options))]


def make_event(kind: str, person: str, pron: str, rng: random.Random, used: set[str], previous: str = "") -> Event:
    """An event of ``kind`` for ``person``; ``previous`` is the value it replaces (job, home, car)."""
    pos = "her" if pron == "she" else "his"

    def fresh(options: list[str]) -> str:
        left = [o for o in options if o not in used] or options
        value = rng.choice(left)
        used.add(value)
        return value

    if kind == "pet":
        species, words = rng.choice(SPECIES)
        name, word = fresh(PET_NAMES), rng.choice(words)
        text = _pick(
            rng,
            [
                f"Guess what, we finally brought home a {word} from the shelter! We're calling it {name}.",
                f"So there's a new member of the household: {name}, a {word}. "
                f"The shelter let us take {name} home on Saturday.",
                f"I couldn't resist any longer, I picked up a {word} from the rescue. Meet {name}!",
            ],
        )
        return Event(
            kind, person, text, f"{person} adopted a {species} named {name}.", "animals",
            [
                ("single_hop", f"What is the name of {person}'s {species}?", name),
                ("single_hop", f"What kind of animal is {name}?", species),
                ("single_hop", f"Which pet did {person} adopt from the shelter?", f"a {species} named {name}"),
            ],
            f"When did {person} adopt {pos} {species}?",
            [f"{name} chewed through another charging cable this morning, I swear.", f"{name} says hi, by the way."],
            [f"Aww, {name} is such a cute name!", f"Send me a picture of {name} please!"],
        )  # fmt: skip
    if kind == "job":
        company, role = fresh(COMPANIES), rng.choice(ROLES)
        moved = f" after leaving {previous}" if previous else ""
        text = _pick(
            rng,
            [
                f"Big news on my side: I signed the contract with {company}{moved}, I'll be their new {role}.",
                f"Monday was my first day as a {role} at {company}. New badge, new commute, new everything.",
                f"I accepted the offer from {company}{moved}! Starting as a {role} next week.",
            ],
        )
        return Event(
            kind, person, text, f"{person} started working at {company} as a {role}.", "career",
            [
                ("single_hop", f"Where does {person} work?", company),
                ("single_hop", f"What is {person}'s role at {company}?", role),
                ("single_hop", f"Which employer hired {person} as a {role}?", company),
            ],
            f"When did {person} start the job at {company}?",
            [f"The people at {company} are nice but the coffee is terrible.", "Work has been intense this month."],
            [f"{company}? That's a great place, well done!", "A new job, how exciting!"],
            slot="job", value=company,
        )  # fmt: skip
    if kind == "home":
        city = fresh(CITIES)
        text = _pick(
            rng,
            [
                f"The boxes are finally unpacked: we now officially live in {city}!",
                f"We signed the lease on a flat in {city}, the move happened last weekend.",
                f"I relocated to {city} at last — new city, new neighbours, new everything.",
            ],
        )
        return Event(
            kind, person, text, f"{person} moved to {city}.", "home",
            [
                ("single_hop", f"Which city does {person} live in?", city),
                ("single_hop", f"Where did {person} relocate to?", city),
            ],
            f"When did {person} move to {city}?",
            [
                f"{city} has the best bakeries, I'm going to gain so much weight.",
                "Still getting lost on the way home lol.",
            ],
            [f"{city}! I've always wanted to visit.", "Moving is exhausting, hope you're settling in."],
            slot="home", value=city,
        )  # fmt: skip
    if kind == "instrument":
        instrument, teacher = fresh(INSTRUMENTS), fresh(TEACHERS)
        text = _pick(
            rng,
            [
                f"I've started taking {instrument} lessons with {teacher} every Thursday evening.",
                f"Fun fact: I now own a {instrument}! {teacher} gives me a lesson once a week.",
            ],
        )
        return Event(
            kind, person, text, f"{person} is learning to play the {instrument} with {teacher}.", "music",
            [
                ("single_hop", f"What musical instrument is {person} learning?", instrument),
                ("single_hop", f"Who teaches {person} the {instrument}?", teacher),
            ],
            f"When did {person} start the {instrument} lessons?",
            [f"My fingers hurt from practising the {instrument}.", f"{teacher} says I'm improving, slowly."],
            [f"The {instrument}? That's so cool!", "Music lessons, love it."],
        )  # fmt: skip
    if kind == "race":
        race = fresh([r for r, _ in RACES])
        distance = dict(RACES)[race]
        minutes = rng.randint(40, 300)
        hours = minutes // 60
        took = f"{hours} hour{'s' if hours > 1 else ''} {minutes % 60} minutes" if hours else f"{minutes} minutes"
        text = _pick(
            rng,
            [
                f"I crossed the finish line of {race} in {took}! My legs are jelly.",
                f"Completed {race} on Sunday, {took} — a personal best.",
            ],
        )
        return Event(
            kind, person, text, f"{person} ran {race} in {took}.", "sport",
            [
                ("single_hop", f"How long did it take {person} to finish the {distance}?", took),
                ("single_hop", f"Which race did {person} run?", race),
            ],
            f"When did {person} run the {distance}?",
            ["My knees are still complaining about that race.", "Running has been keeping me sane."],
            ["You're a machine!", "Congrats on the run, that's a great time."],
        )  # fmt: skip
    if kind == "trip":
        place, reason = fresh([p for p, _ in PLACES]), ""
        reason = dict(PLACES)[place]
        text = _pick(
            rng,
            [
                f"Just got back from {place}! We went {reason} and it was unforgettable.",
                f"We spent ten days in {place}, we went {reason}. I have a thousand photos.",
            ],
        )
        return Event(
            kind, person, text, f"{person} travelled to {place} {reason}.", "travel",
            [
                ("single_hop", f"Where did {person} go on holiday?", place),
                ("single_hop", f"Why did {person} travel to {place}?", reason),
            ],
            f"When did {person} visit {place}?",
            [f"I'm still dreaming about {place}.", "Jet lag is real, I was up at 4 am."],
            [f"{place}, how lucky are you!", "Travel envy over here."],
        )  # fmt: skip
    if kind == "book":
        title = fresh([t for t, _ in BOOKS])
        author = dict(BOOKS)[title]
        text = _pick(
            rng,
            [
                f"I'm halfway through {title} by {author} and I can't put it down.",
                f"My book club picked {title}; {author} writes like a dream.",
            ],
        )
        return Event(
            kind, person, text, f"{person} is reading {title} by {author}.", "reading",
            [
                ("single_hop", f"Which novel is {person} reading?", title),
                ("single_hop", f"Who wrote the book {person} recommended?", author),
            ],
            f"When was {person} reading {title}?",
            [f"Finished {title} last night, the ending wrecked me.", "I need a new book, any ideas?"],
            [f"I'll add {title} to my list.", "Ooh, I love a good book recommendation."],
        )  # fmt: skip
    if kind == "car":
        car = fresh(CARS)
        text = _pick(
            rng,
            [f"I finally replaced the old car, I got {car}!", f"Drove {car} home from the dealership today."],
        )
        return Event(
            kind, person, text, f"{person} bought {car}.", "cars",
            [("single_hop", f"What car does {person} drive?", car)],
            f"When did {person} buy {car}?",
            ["The new car smells like a pine forest.", "Parking is a nightmare though."],
            ["A new car! Road trip time.", "Nice wheels!"],
            slot="car", value=car,
        )  # fmt: skip
    if kind == "course":
        subject = fresh([c for c, _ in COURSES])
        school = dict(COURSES)[subject]
        text = f"I signed up for a {subject} class at {school}, it's on Tuesday nights."
        return Event(
            kind, person, text, f"{person} enrolled in a {subject} class at {school}.", "learning",
            [
                ("single_hop", f"What class did {person} enroll in?", subject),
                ("single_hop", f"Where does {person} study {subject}?", school),
            ],
            f"When did {person} sign up for the {subject} course?",
            [f"The {subject} homework is harder than I thought.", "Class ran late again."],
            [f"{subject.capitalize()}! What made you pick that?", "Learning something new, good for you."],
        )  # fmt: skip
    if kind == "volunteer":
        place = fresh(VOLUNTEER)
        text = f"I've been helping out at {place} on Saturday mornings, it's so rewarding."
        return Event(
            kind, person, text, f"{person} volunteers at {place}.", "community",
            [("single_hop", f"Where does {person} volunteer?", place)],
            f"When did {person} start volunteering?",
            ["Saturday mornings are busy but I love it.", "We had a huge queue at the volunteer shift."],
            ["That's really kind of you.", "Volunteering, that's lovely."],
        )  # fmt: skip
    if kind == "concert":
        band = fresh([b for b, _ in BANDS])
        venue = dict(BANDS)[band]
        text = f"Last night I saw {band} play at {venue}, I lost my voice from singing along."
        return Event(
            kind, person, text, f"{person} saw {band} live at {venue}.", "music",
            [
                ("single_hop", f"Which band did {person} see live?", band),
                ("single_hop", f"Where did {person} watch {band} perform?", venue),
            ],
            f"When did {person} go to the {band} concert?",
            [f"Still humming {band} songs all day.", "My ears are still ringing."],
            [f"{band}? Jealous!", "Concerts are the best."],
        )  # fmt: skip
    # sibling news
    sibling = fresh(SIBLINGS)
    news = rng.choice(["got engaged", "had a baby girl", "opened a little café", "graduated from medical school"])
    text = f"Family update: my sibling {sibling} {news}! We're all over the moon."
    return Event(
        kind, person, text, f"{person}'s sibling {sibling} {news}.", "family",
        [
            ("single_hop", f"What happened to {person}'s sibling?", news),
            ("single_hop", f"What is the name of {person}'s sibling?", sibling),
        ],
        f"When did {person}'s sibling {sibling} share the news?",
        [f"{sibling} is already planning a party.", "Family group chat is going wild."],
        ["Congratulations to your family!", "Such happy news!"],
    )  # fmt: skip


# A line that tells no event but holds information an extractor keeps ("X mentioned: …").
MENTION = Event("mention", "", "", "", "", [], "")
EVENT_KINDS = [
    "pet",
    "job",
    "home",
    "instrument",
    "race",
    "trip",
    "book",
    "car",
    "course",
    "volunteer",
    "concert",
    "family",
]
CHANGING = ["job", "home", "car"]


def distractor(rng: random.Random, person: str) -> str:
    """A line sharing words with events without answering anything about the speakers."""
    return rng.choice(
        [
            f"My cousin's {rng.choice(['dog', 'cat', 'rabbit', 'parrot'])} got loose in the park again, total chaos.",
            f"I always wanted to learn the {rng.choice(INSTRUMENTS)}, maybe one day.",
            f"A friend of mine applied at {rng.choice(COMPANIES)} but never heard back.",
            f"I read that rents in {rng.choice(CITIES)} went up again.",
            f"My neighbour is training for {rng.choice(RACES)[0]}, rather him than me.",
            f"There's a documentary about {rng.choice(PLACES)[0]} on tonight.",
            f"My colleague keeps recommending {rng.choice(BOOKS)[0]}, I'm not convinced.",
            f"Someone parked {rng.choice(CARS)} across my driveway this morning.",
            f"My aunt took a {rng.choice(COURSES)[0]} class years ago and still talks about it.",
            f"Have you heard the new {rng.choice(BANDS)[0]} single? Not my thing.",
            "I keep thinking I should get a pet, but my landlord says no animals.",
            "I was thinking about a new job but honestly I'm happy where I am.",
            "Moving house is my idea of a nightmare.",
            f"{person} is a lovely name, by the way, did I ever tell you?",
        ]
    )


def generate_conversation(index: int, rng: random.Random, split: str) -> Conversation:
    (a, a_pron), (b, b_pron) = rng.sample(PEOPLE, 2)
    conv = Conversation(id=f"conv-{index:02d}", split=split, speakers=[a, b])
    sessions = rng.randint(9, 12)
    start = dt.date(2023, 1, 1) + dt.timedelta(days=rng.randint(0, 120))
    dates = [start]
    for _ in range(sessions - 1):
        dates.append(dates[-1] + dt.timedelta(days=rng.randint(14, 45)))
    used: set[str] = set()
    plans: list[tuple[int, Event]] = []  # (session, event)
    for person, pron in ((a, a_pron), (b, b_pron)):
        kinds = rng.sample(EVENT_KINDS, 7)
        for kind in kinds:
            session = rng.randrange(sessions)
            if kind in CHANGING:
                first = make_event(kind, person, pron, rng, used)
                session = rng.randrange(max(1, sessions - 4))
                plans.append((session, first))
                later = rng.randrange(session + 2, sessions)
                plans.append((later, make_event(kind, person, pron, rng, used, previous=first.value)))
            else:
                plans.append((session, make_event(kind, person, pron, rng, used)))
    told: list[Event] = []
    for s, date in enumerate(dates):
        todays = [e for when, e in plans if when == s]
        # (speaker, text, the event it tells, whether extraction yields an observation for it)
        lines: list[tuple[str, str, Event | None]] = [(a, rng.choice(CHIT_CHAT[:2] + CHIT_CHAT[16:19]), None)]
        lines.append((b, rng.choice(CHIT_CHAT), None))
        pending = list(todays)
        rng.shuffle(pending)
        while pending or len(lines) < 12:
            roll = rng.random()
            if pending and roll < 0.35:
                event = pending.pop()
                other = b if event.person == a else a
                lines.append((event.person, event.text, event))
                lines.append((other, rng.choice(event.reactions + REACTIONS), None))
            elif told and roll < 0.55:
                event = rng.choice(told)
                lines.append((event.person, rng.choice(event.follow_ups), MENTION))
            elif roll < 0.75:
                speaker = rng.choice([a, b])
                lines.append((speaker, distractor(rng, b if speaker == a else a), MENTION))
            else:
                lines.append((rng.choice([a, b]), rng.choice(CHIT_CHAT), None))
        lines.append((rng.choice([a, b]), rng.choice(CHIT_CHAT[8:11]), None))
        for speaker, text, said in lines:
            turn = Turn(f"{conv.id}:s{s + 1}:t{len(conv.turns) + 1}", s + 1, date.isoformat(), speaker, text)
            conv.turns.append(turn)
            if said is MENTION:
                sentence = f"{speaker} mentioned: {text}"
                conv.observations.append(Observation(f"{turn.id}:o", sentence, turn.date, turn.id))
            elif said is not None:
                said.turn_id, said.date = turn.id, date
                told.append(said)
                dated = rng.random() < 0.5
                sentence = said.observation[:-1] + (f" in {_month(date)}." if dated else ".")
                conv.observations.append(Observation(f"{turn.id}:o", sentence, turn.date, turn.id))
    questions = _questions(conv, told, rng)
    conv.questions = questions
    return conv


def _questions(conv: Conversation, told: list[Event], rng: random.Random) -> list[Question]:
    out: list[Question] = []

    def add(kind: str, question: str, answer: str, evidence: list[str]) -> None:
        out.append(Question(f"{conv.id}:q{len(out) + 1}", kind, question, answer, evidence))

    for event in told:
        if event.slot:
            continue  # changing attributes get their own questions below
        kind, question, answer = rng.choice(event.questions)
        add(kind, question, answer, [event.turn_id])
        if rng.random() < 0.5:
            assert event.date is not None
            add("temporal", event.when_question, _month(event.date), [event.turn_id])
    # Changing attributes: the current value, and the value at a time between the two statements.
    by_slot: dict[tuple[str, str], list[Event]] = {}
    for event in told:
        if event.slot:
            by_slot.setdefault((event.person, event.slot), []).append(event)
    for (person, slot), events in by_slot.items():
        events.sort(key=lambda e: e.date or dt.date.min)
        first, last = events[0], events[-1]
        assert first.date is not None
        assert last.date is not None
        current = {"job": f"Where does {person} work now?", "home": f"Where does {person} live these days?"}
        current["car"] = f"What is {person} driving these days?"
        add("single_hop", current[slot], last.value, [last.turn_id])
        middle = first.date + (last.date - first.date) / 2
        past = {
            "job": f"Where was {person} working in {_month(middle)}?",
            "home": f"Which city was {person} living in during {_month(middle)}?",
            "car": f"What car did {person} have in {_month(middle)}?",
        }
        if middle.month != last.date.month or middle.year != last.date.year:
            add("temporal", past[slot], first.value, [first.turn_id])
        changed = {"job": "jobs", "home": "homes", "car": "cars"}[slot]
        add("temporal", f"When did {person} last change {changed}?", _month(last.date), [last.turn_id])
    # Multi-hop: a person identified by one event, asked about another; both speakers' trips or hobbies.
    people = conv.speakers
    for person in people:
        mine = [e for e in told if e.person == person]
        anchors = [e for e in mine if e.kind in ("job", "home", "instrument", "course")]
        targets = [e for e in mine if e.kind in ("pet", "race", "trip", "book", "concert", "family")]
        for anchor, target in zip(rng.sample(anchors, len(anchors)), rng.sample(targets, len(targets)), strict=False):
            clue = {
                "job": f"the person who joined {anchor.value or 'their company'}",
                "home": f"the friend who moved to {anchor.value}",
                "instrument": "the friend taking music lessons",
                "course": "the friend who signed up for an evening class",
            }[anchor.kind]
            ask = {
                "pet": f"What is the name of the pet that belongs to {clue}?",
                "race": f"Which race did {clue} complete?",
                "trip": f"Where did {clue} travel to?",
                "book": f"What book was {clue} reading?",
                "concert": f"Which band did {clue} see in concert?",
                "family": f"What news did {clue} share about a sibling?",
            }[target.kind]
            add("multi_hop", ask, target.observation, [anchor.turn_id, target.turn_id])
    # Open-domain: a kind of thing, every turn that tells one.
    categories: dict[tuple[str, str], list[Event]] = {}
    for event in told:
        categories.setdefault((event.person, event.category), []).append(event)
    phrasing = {
        "animals": "Does {p} have any animals at home?", "career": "How is {p}'s career going?",
        "home": "Has {p} ever changed where they live?", "music": "Is {p} into music?",
        "sport": "Is {p} an athletic person?", "travel": "Does {p} like to see the world?",
        "reading": "Is {p} much of a reader?", "cars": "What does {p} get around in?",
        "learning": "Is {p} taking any classes?", "community": "Does {p} give time to good causes?",
        "family": "Any news from {p}'s relatives?",
    }  # fmt: skip
    for (person, category), events in sorted(categories.items()):
        if rng.random() < 0.6:
            answer = "; ".join(e.observation for e in events)
            add("open_domain", phrasing[category].format(p=person), answer, [e.turn_id for e in events])
    return out


def generate(seed: int = SEED, conversations: int = 24) -> list[Conversation]:
    rng = random.Random(seed)
    half = conversations // 2
    return [generate_conversation(i, rng, "tune" if i < half else "heldout") for i in range(conversations)]


def to_json(convs: list[Conversation]) -> dict[str, object]:
    return {
        "seed_note": "bench/conversations.py; split by conversation, fixed before tuning",
        "conversations": [asdict(c) for c in convs],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    convs = generate(args.seed, args.conversations)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(to_json(convs), ensure_ascii=False, indent=0) + "\n")
    turns = sum(len(c.turns) for c in convs)
    kinds: dict[str, int] = {}
    for c in convs:
        for q in c.questions:
            kinds[q.kind] = kinds.get(q.kind, 0) + 1
    print(
        f"{len(convs)} conversations, {turns} turns, {sum(len(c.observations) for c in convs)} observations, "
        f"{sum(kinds.values())} questions {kinds} → {args.out}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
