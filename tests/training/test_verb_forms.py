"""The subject reader's verb list: built from Brill's lexicon, checked before use."""

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
from memories.subjects import VerbFormsError, verb_forms
from training.verb_forms import LEXICON_IN_WHEEL, read_lexicon, write_verb_forms
from training.verb_forms import verb_forms as forms_of

LEXICON = """;;;   A comment line.
;;;
expanded VBN
handed VBD
avoids VBZ
communicate VB
talk VBP
cluster NN
alerts VBZ
Moved VBD
x-ray VB
"""


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    verb_forms.cache_clear()
    yield
    verb_forms.cache_clear()


def test_only_lower_case_words_tagged_as_verb_forms_are_kept() -> None:
    assert forms_of(LEXICON) == [
        ("alerts", "VBZ"),
        ("avoids", "VBZ"),
        ("communicate", "VB"),
        ("expanded", "VBN"),
        ("handed", "VBD"),
        ("talk", "VBP"),
    ]


def test_the_same_lexicon_gives_the_same_bytes(tmp_path: Path) -> None:
    first = write_verb_forms(forms_of(LEXICON), tmp_path / "a.tsv.gz")
    second = write_verb_forms(forms_of(LEXICON), tmp_path / "b.tsv.gz")

    assert first == second
    assert gzip.decompress(first).decode().splitlines()[0] == "alerts\tVBZ"


def test_the_lexicon_is_read_from_the_wheel_that_carries_it(tmp_path: Path) -> None:
    wheel = tmp_path / "textblob-0.20.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as packed:
        packed.writestr(LEXICON_IN_WHEEL, LEXICON)

    assert read_lexicon(wheel) == LEXICON


def test_the_command_writes_the_file_and_names_its_sha256(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lexicon = tmp_path / "en-lexicon.txt"
    lexicon.write_text(LEXICON)
    out = tmp_path / "verb_forms.tsv.gz"

    call_command("build_verb_forms", str(lexicon), "--out", str(out))

    assert f"sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}" in capsys.readouterr().out


def test_the_command_refuses_a_file_without_verb_forms(tmp_path: Path) -> None:
    lexicon = tmp_path / "words.txt"
    lexicon.write_text("cluster NN\n")

    with pytest.raises(CommandError, match="no verb forms"):
        call_command("build_verb_forms", str(lexicon), "--out", str(tmp_path / "out.gz"))


@pytest.mark.usefixtures("fresh_cache")
def test_the_shipped_list_holds_the_verbs_the_reader_lacked() -> None:
    forms = verb_forms()

    assert len(forms) == 7975
    assert (forms["expanded"], forms["avoids"], forms["communicate"]) == ("VBN", "VBZ", "VB")
    assert "cluster" not in forms


@pytest.mark.usefixtures("fresh_cache")
def test_a_list_that_does_not_match_its_sha256_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "verb_forms.tsv.gz"
    write_verb_forms(forms_of(LEXICON), other)
    monkeypatch.setattr(subjects, "VERB_FORMS", other)

    with pytest.raises(VerbFormsError, match="sha256"):
        verb_forms()
