"""The subject reader's word list (built from Brill's lexicon, checked before use) and what it reads names by."""

from __future__ import annotations

import gzip
import hashlib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories import subjects
from memories.subjects import LexiconError, lexicon, names_apart, names_itself, subject_of
from training.lexicon import LEXICON_IN_WHEEL, common_words, read_lexicon, write_lexicon

LEXICON = """;;;   A comment line.
;;;
expanded VBN
handed VBD
avoids VBZ
cluster NN
Moved VBD
Acme NNP
x-ray VB
"""


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    lexicon.cache_clear()
    yield
    lexicon.cache_clear()


def test_only_lower_case_alphabetic_words_are_kept_with_their_tags() -> None:
    assert common_words(LEXICON) == [("avoids", "VBZ"), ("cluster", "NN"), ("expanded", "VBN"), ("handed", "VBD")]


def test_the_same_lexicon_gives_the_same_bytes(tmp_path: Path) -> None:
    first = write_lexicon(common_words(LEXICON), tmp_path / "a.tsv.gz")
    second = write_lexicon(common_words(LEXICON), tmp_path / "b.tsv.gz")

    assert first == second
    assert gzip.decompress(first).decode().splitlines()[0] == "avoids\tVBZ"


def test_the_lexicon_is_read_from_the_wheel_that_carries_it(tmp_path: Path) -> None:
    wheel = tmp_path / "textblob-0.20.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as packed:
        packed.writestr(LEXICON_IN_WHEEL, LEXICON)

    assert read_lexicon(wheel) == LEXICON


def test_the_command_writes_the_file_and_names_its_sha256(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "en-lexicon.txt"
    source.write_text(LEXICON)
    out = tmp_path / "lexicon.tsv.gz"

    call_command("build_lexicon", str(source), "--out", str(out))

    assert f"sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["Acme NNP\nBoston NNP\n", "12 CD\n"])
def test_the_command_refuses_a_file_without_common_words(tmp_path: Path, content: str) -> None:
    source = tmp_path / "words.txt"
    source.write_text(content)

    with pytest.raises(CommandError, match="no lower-case words"):
        call_command("build_lexicon", str(source), "--out", str(tmp_path / "out.gz"))


def test_the_command_refuses_a_wheel_without_the_lexicon(tmp_path: Path) -> None:
    wheel = tmp_path / "other-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as packed:
        packed.writestr("other/__init__.py", "")

    with pytest.raises(CommandError, match="no lexicon could be read"):
        call_command("build_lexicon", str(wheel), "--out", str(tmp_path / "out.gz"))


@pytest.mark.usefixtures("fresh_cache")
def test_the_shipped_list_holds_common_words_and_their_tags() -> None:
    words = lexicon()

    assert len(words) == 42918
    assert (words["expanded"], words["avoids"], words["cluster"]) == ("VBN", "VBZ", "NN")
    assert "initech" not in words


@pytest.mark.usefixtures("fresh_cache")
def test_a_list_that_does_not_match_its_sha256_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "lexicon.tsv.gz"
    write_lexicon(common_words(LEXICON), other)
    monkeypatch.setattr(subjects, "LEXICON", other)

    with pytest.raises(LexiconError, match="sha256"):
        lexicon()


@pytest.mark.parametrize(
    ("text", "entity", "named"),
    [
        ("Acme Corp signed for 80 more seats.", "acme corp", True),
        ("Initech renewed for one more year.", "initech", True),  # opens the text, but is no common word
        ("Exports now use the workspace time zone.", "exports", False),  # opens the text, and is a word
        ("The staging cluster runs in eu-west-1.", "staging cluster", False),
        ("Yoga on Wednesdays at 18:30.", "wednesdays", False),  # a time, not a thing
        ("Moved the Celery broker off RabbitMQ.", "celery broker", False),  # a note that leaves its subject out
    ],
)
def test_a_fact_names_itself_by_a_proper_name(text: str, entity: str, named: bool) -> None:
    assert names_itself(text, entity) is named


@pytest.mark.parametrize(
    ("older", "newer", "apart"),
    [
        ("Acme Corp has 200 seats on Pro.", "Initech renewed at 30 seats.", True),  # two customers
        ("Acme Corp has 200 seats on Pro.", "Acme renewed at 230 seats.", False),  # one names the other
        # One fact names the other's subject too: about one relation between them.
        ("Halvorsen's head of IT is Ingrid Dahl.", "Ingrid Dahl left Halvorsen; Omar Saleh took over.", False),
        ("Exports now use UTC.", "Initech renewed at 30 seats.", False),  # only one is a name
    ],
)
def test_two_facts_named_by_two_unrelated_names_are_two_things(older: str, newer: str, apart: bool) -> None:
    assert names_apart(older, subject_of(older).entity, newer, subject_of(newer).entity) is apart
