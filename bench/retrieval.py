"""Does recall find the evidence in long conversations? The hub beside dense, BM25 and the seed's hybrid (issue 22).

    .venv/bin/python bench/retrieval.py [--data bench/data/conversations.json] [--keep] [--reuse VAR_DIR]
                                        [--json var/retrieval.json] [--variants]

1. Starts ``manage.py run_hub`` as `make run` does (bench/burst.py's
   ``make_run_stack``) on a fresh var dir: its own embedded PostgreSQL, the web process,
   Celery worker and beat.
2. Each conversation of ``bench/data/conversations.json`` (written by
   bench/conversations.py) goes into two workspaces over HTTP
   (``POST /memories/batch``): one holding its turns ("Speaker: text",
   ``valid_from`` = the session date), one its observation sentences (dated by
   their source turn's session). Then ``GET /status`` is polled until every
   fact is embedded and checked (detection included).
3. Every question is asked through ``POST /recall`` (k = 10) in the default
   mode (hybrid) and in ``semantic`` mode; the client-side latency is kept.
4. After the stack stops, the same database is opened in-process and, over the
   same stored texts with their stored MiniLM vectors (memories/embeddings.py),
   three baselines rank every fact of the conversation: plain dense cosine,
   plain BM25 over the whole conversation (recall's own tokeniser), and seed
   003's hybrid (cosine pool of 4·k, then 0.55 cosine + 0.20 BM25 with
   pool-local IDF + 0.15 recency exp(−0.1·days before the newest fact) + 0.10
   confidence). ``--variants`` also runs in-process recall variants (for tuning).
5. Reported by split (tune / heldout), form (turns / observations), method and
   question kind: hit@5, hit@10 (an evidence turn in the top k; for multi-hop
   questions every one) and evidence recall@5, @10 (the share of evidence turns
   in the top k); latency p50/p95.
   Printed and written to ``--json``.

``--reuse VAR_DIR`` skips 1–3 on a database a ``--keep`` run left (its HTTP
figures are read from the JSON it wrote there); ``--reuse VAR_DIR --ask`` skips
only the ingestion: the stack starts on that database and step 3 runs again
with the code checked out now (detection's marks do not depend on recall's code). docs/BENCHMARKS.md holds the results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.burst import Agent, make_run_stack  # noqa: E402
from bench.common import cpu_model, load_average, percentile  # noqa: E402

DEFAULT_DATA = ROOT / "bench" / "data" / "conversations.json"
FORMS = ("turns", "observations")
KINDS = ("single_hop", "multi_hop", "temporal", "open_domain")
K = 10
BATCH = 500
SEED_WEIGHTS = {"cosine": 0.55, "lexical": 0.20, "recency": 0.15, "confidence": 0.10}
SEED_LAMBDA = 0.1

Ranking = list[str]  # memory ids, best first


def load(path: Path) -> list[dict[str, Any]]:
    conversations: list[dict[str, Any]] = json.loads(path.read_text())["conversations"]
    return conversations


def workspace_slug(form: str, conversation: dict[str, Any]) -> str:
    return f"retrieval-{form}-{conversation['id']}"


def items_of(form: str, conversation: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(text, valid_from, source turn) for each fact the form ingests."""
    if form == "turns":
        return [(f"{t['speaker']}: {t['text']}", t["date"], t["id"]) for t in conversation["turns"]]
    return [(o["text"], o["date"], o["source_turn"]) for o in conversation["observations"]]


# ----------------------------------------------------------------------------------------------- phase 1: HTTP
def ingest(stack: Any, conversations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Commit every conversation in both forms; returns per workspace: key and memory id → source turns."""
    workspaces: dict[str, dict[str, Any]] = {}
    keys = create_keys(stack, [workspace_slug(form, c) for c in conversations for form in FORMS])
    for conversation in conversations:
        for form in FORMS:
            slug = workspace_slug(form, conversation)
            key = keys[slug]
            agent = Agent(stack.port, key)
            turns_of: dict[str, list[str]] = defaultdict(list)
            items = items_of(form, conversation)
            for start in range(0, len(items), BATCH):
                chunk = items[start : start + BATCH]
                body = {
                    "memories": [
                        {"text": text, "valid_from": f"{date}T12:00:00Z", "metadata": {"turn": turn}, "agent": "chat"}
                        for text, date, turn in chunk
                    ]
                }
                result = agent.call("POST", "/memories/batch", body)
                for item, (_, _, turn) in zip(result["results"], chunk, strict=True):  # type: ignore[call-overload]
                    if item["action"] == "rejected":
                        raise RuntimeError(f"{slug}: rejected {item}")
                    turns_of[str(item["id"])].append(turn)
            workspaces[slug] = {"key": key, "turns_of": dict(turns_of)}
        print(f"  ingested {conversation['id']} ({len(conversation['turns'])} turns)", flush=True)
    return workspaces


def create_keys(stack: Any, slugs: list[str]) -> dict[str, str]:
    """One agent key per workspace (created), in one ``manage.py shell`` rather than one process each."""
    script = (
        "from workspaces.models import DEFAULT_SCOPES\n"
        "from workspaces.services import agent_key_create, workspace_get_or_create\n"
        f"for slug in {slugs!r}:\n"
        "    workspace, _ = workspace_get_or_create(slug=slug)\n"
        "    _, key = agent_key_create(\n"
        "        workspace=workspace, name='retrieval-bench', scopes=list(DEFAULT_SCOPES), agent=''\n"
        "    )\n"
        "    print(slug, key)\n"
    )
    result = subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=stack.env,
        check=True,
        capture_output=True,
        text=True,
    )
    keys = dict(line.split(" ", 1) for line in result.stdout.strip().splitlines() if line.startswith("retrieval-"))
    missing = set(slugs) - set(keys)
    if missing:
        raise RuntimeError(f"no key for {sorted(missing)[:3]}: {result.stderr[-500:]}")
    return keys


def wait_until_checked(agent: Agent, timeout: float = 5400) -> float:
    started = time.monotonic()
    shown = started
    while time.monotonic() - started < timeout:
        status = agent.call("GET", "/status")
        embedding, checking = status["embedding"], status["checking"]
        assert isinstance(embedding, dict)
        assert isinstance(checking, dict)
        if embedding["waiting"] == 0 and checking["waiting"] == 0:
            return time.monotonic() - started
        if time.monotonic() - shown > 30:
            shown = time.monotonic()
            print(f"    waiting: embed {embedding['waiting']:,}, check {checking['waiting']:,}", flush=True)
        time.sleep(1)
    raise RuntimeError("detection did not finish")


def ask_http(
    stack: Any, conversations: list[dict[str, Any]], workspaces: dict[str, dict[str, Any]], split: str = ""
) -> dict[str, dict[str, dict[str, Any]]]:
    """question id → method → {ranking, ms} for the hub's hybrid and semantic modes, both forms."""
    answers: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for conversation in conversations:
        if split and conversation["split"] != split:
            continue
        for form in FORMS:
            slug = workspace_slug(form, conversation)
            agent = Agent(stack.port, workspaces[slug]["key"])
            for question in conversation["questions"]:
                for mode in ("hybrid", "semantic"):
                    started = time.monotonic()
                    hits: Any = agent.call("POST", "/recall", {"query": question["question"], "k": K, "mode": mode})
                    ms = (time.monotonic() - started) * 1000
                    ranking = [str(h["memory"]["id"]) for h in hits]
                    answers[f"{form}|{question['id']}"][f"hub {mode}"] = {"ranking": ranking, "ms": ms}
    return answers


# --------------------------------------------------------------------------------------- phase 2: in-process
def django_on(var_dir: Path) -> None:
    os.environ["MEMORYHUB_VAR_DIR"] = str(var_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()


class Corpus:
    """One workspace's facts as the baselines see them: ids, texts, vectors, dates, BM25 terms."""

    def __init__(self, slug: str) -> None:
        from memories.models import Memory
        from recall.hybrid import bm25_terms

        rows = list(
            Memory.objects.filter(workspace__slug=slug)
            .exclude(status__in=["merged", "forgotten"])
            .order_by("recorded_at", "id")
            .values_list("id", "text", "embedding", "valid_from", "confidence")
        )
        self.ids = [str(r[0]) for r in rows]
        self.vectors = np.array([r[2] for r in rows], dtype=np.float32)
        self.valid_from = [r[3] for r in rows]
        self.confidence = np.array([r[4] for r in rows], dtype=np.float32)
        self.terms = [bm25_terms(r[1]) for r in rows]
        self.df: Counter[str] = Counter()
        for terms in self.terms:
            self.df.update(set(terms))
        self.avg_len = sum(len(t) for t in self.terms) / max(1, len(self.terms))

    def bm25(self, query_terms: list[str], indexes: Iterable[int] | None = None, *, local: bool = False) -> np.ndarray:
        """BM25 of each fact (all, or ``indexes``), IDF over the whole conversation (or ``indexes`` if local)."""
        chosen = list(range(len(self.ids))) if indexes is None else list(indexes)
        if local:
            df: Counter[str] = Counter()
            for i in chosen:
                df.update(set(self.terms[i]))
            n, avg = len(chosen), sum(len(self.terms[i]) for i in chosen) / max(1, len(chosen))
        else:
            df, n, avg = self.df, len(self.ids), self.avg_len
        scores = np.zeros(len(chosen), dtype=np.float32)
        for slot, i in enumerate(chosen):
            counts = Counter(self.terms[i])
            for term in set(query_terms):
                tf = counts.get(term, 0)
                if tf:
                    idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                    scores[slot] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(self.terms[i]) / avg))
        return scores


def baselines(corpus: Corpus, query: str, vector: np.ndarray) -> dict[str, Ranking]:
    from recall.hybrid import bm25_terms

    cosine = corpus.vectors @ vector
    dense = [corpus.ids[i] for i in np.argsort(-cosine, kind="stable")[:K]]
    terms = bm25_terms(query, query=True)
    bm25 = corpus.bm25(terms)
    lexical = [corpus.ids[i] for i in np.argsort(-bm25, kind="stable")[:K]] if bm25.max() > 0 else []
    # Seed 003: a cosine pool of 4·k, BM25 with pool-local IDF normalised to the best, recency, importance.
    pool = list(np.argsort(-cosine, kind="stable")[: 4 * K])
    local = corpus.bm25(terms, pool, local=True)
    local = local / local.max() if local.max() > 0 else local
    newest = max(corpus.valid_from[i] for i in pool)
    scores = []
    for slot, i in enumerate(pool):
        age = (newest - corpus.valid_from[i]).total_seconds() / 86400
        score = (
            SEED_WEIGHTS["cosine"] * cosine[i]
            + SEED_WEIGHTS["lexical"] * local[slot]
            + SEED_WEIGHTS["recency"] * math.exp(-SEED_LAMBDA * age)
            + SEED_WEIGHTS["confidence"] * corpus.confidence[i]
        )
        scores.append((-score, slot))
    seed = [corpus.ids[pool[slot]] for _, slot in sorted(scores)[:K]]
    return {"dense": dense, "bm25": lexical, "seed hybrid": seed}


def in_process_variants() -> dict[str, Callable[[Any, str, np.ndarray], Ranking]]:
    """Recall variants run in this process against the same workspace (``--variants``): each rule's share."""
    from recall import hybrid

    def run(patches: dict[str, Any] | None = None, **options: Any) -> Callable[[Any, str, np.ndarray], Ranking]:
        def ask(workspace: Any, query: str, vector: np.ndarray) -> Ranking:
            saved = {name: getattr(hybrid, name) for name in patches or {}}
            for name, value in (patches or {}).items():
                setattr(hybrid, name, value)
            try:
                query_ = hybrid.RecallQuery(query=query, k=K, touch=False, **options)
                hits = hybrid.recall(workspace=workspace, query=query_, query_vector=vector)
            finally:
                for name, value in saved.items():
                    setattr(hybrid, name, value)
            return [str(h.memory.pk) for h in hits]

        return ask

    return {
        "in-process hybrid": run(),
        "· every dispute mark in full": run({"_mark_certainty": lambda pool: {}}),
        "· diversity collapses every near-duplicate": run({"_same_information": lambda *args: True}),
        "· no period in the query read": run({"query_period": lambda text: None}),
        "· 'when did …' not read as history": run({"HISTORY_QUESTIONS": False}),
        "· '… last …' not read as newest first": run({"LATEST_QUESTIONS": False}),
    }


# ------------------------------------------------------------------------------------------------- scoring
def scores_of(
    ranking: Ranking, turns_of: dict[str, list[str]], evidence: list[str], k: int, kind: str
) -> tuple[float, float]:
    """(hit, evidence recall) at k. A multi-hop hit needs every evidence turn; other kinds one of them."""
    found = {turn for memory in ranking[:k] for turn in turns_of.get(memory, [])}
    hits = [turn in found for turn in evidence]
    hit = all(hits) if kind == "multi_hop" else any(hits)
    return float(hit), sum(hits) / len(evidence)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean hit@5/10, recall@5/10 by split → form → method → kind (plus "all")."""
    table: dict[str, Any] = {}
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for kind in (row["kind"], "all"):
            groups[(row["split"], row["form"], row["method"], kind)].append(row)
    for (split, form, method, kind), members in sorted(groups.items()):
        cell = {
            m: round(float(np.mean([r[m] for r in members])), 3) for m in ("hit@5", "hit@10", "recall@5", "recall@10")
        }
        cell["n"] = len(members)
        table.setdefault(split, {}).setdefault(form, {}).setdefault(method, {})[kind] = cell
    return table


def print_tables(table: dict[str, Any], latencies: dict[str, list[float]]) -> None:
    for split in ("tune", "heldout"):
        for form in FORMS:
            methods = table.get(split, {}).get(form, {})
            if not methods:
                continue
            n = next(iter(methods.values()))["all"]["n"]
            print(f"\n{split} · {form} · {n} questions — hit@10 by kind (hit@5 · recall@10 for all)")
            print("| method | all hit@10 | hit@5 | recall@10 | " + " | ".join(KINDS) + " |")
            print("|---|---|---|---|" + "---|" * len(KINDS))
            for method, kinds in methods.items():
                a = kinds["all"]
                by_kind = " | ".join(f"{kinds[k]['hit@10']:.3f}" if k in kinds else "-" for k in KINDS)
                print(f"| {method} | **{a['hit@10']:.3f}** | {a['hit@5']:.3f} | {a['recall@10']:.3f} | {by_kind} |")
    for method, values in sorted(latencies.items()):
        print(
            f"latency {method}: p50 {percentile(values, 50):.1f} ms, "
            f"p95 {percentile(values, 95):.1f} ms ({len(values)})"
        )


def evaluate(
    conversations: list[dict[str, Any]],
    workspaces: dict[str, dict[str, Any]],
    http_answers: dict[str, dict[str, dict[str, Any]]],
    variants: bool,
) -> tuple[list[dict[str, Any]], dict[str, list[float]]]:
    from memories.embeddings import embed_texts
    from workspaces.models import Workspace

    questions = [q for c in conversations for q in c["questions"]]
    vectors = dict(zip((q["id"] for q in questions), embed_texts([q["question"] for q in questions]), strict=True))
    extra = in_process_variants() if variants else {}
    rows: list[dict[str, Any]] = []
    latencies: dict[str, list[float]] = defaultdict(list)
    for conversation in conversations:
        for form in FORMS:
            slug = workspace_slug(form, conversation)
            turns_of = workspaces[slug]["turns_of"]
            corpus = Corpus(slug)
            workspace = Workspace.objects.get(slug=slug) if extra else None
            for question in conversation["questions"]:
                vector = vectors[question["id"]]
                rankings = baselines(corpus, question["question"], vector)
                for method, answer in http_answers.get(f"{form}|{question['id']}", {}).items():
                    rankings[method] = answer["ranking"]
                    latencies[f"{method} (HTTP)"].append(answer["ms"])
                for method, ask in extra.items():
                    if method.startswith("·") and conversation["split"] != "heldout":
                        continue  # the rule-by-rule variants: on the held-out part only (time)
                    started = time.monotonic()
                    rankings[method] = ask(workspace, question["question"], vector)
                    latencies[f"{method} (in process, query vector given)"].append((time.monotonic() - started) * 1000)
                for method, ranking in rankings.items():
                    hit5, recall5 = scores_of(ranking, turns_of, question["evidence"], 5, question["kind"])
                    hit10, recall10 = scores_of(ranking, turns_of, question["evidence"], 10, question["kind"])
                    rows.append(
                        {
                            "split": conversation["split"],
                            "form": form,
                            "method": method,
                            "kind": question["kind"],
                            "question": question["id"],
                            "hit@5": hit5,
                            "hit@10": hit10,
                            "recall@5": recall5,
                            "recall@10": recall10,
                        }
                    )
    return rows, latencies


def detection_marks(conversations: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """How many facts detection left non-reliable or superseded, by form."""
    from memories.models import Memory

    marks: dict[str, dict[str, int]] = {}
    for form in FORMS:
        slugs = [workspace_slug(form, c) for c in conversations]
        counts = Counter(Memory.objects.filter(workspace__slug__in=slugs).values_list("reliability", flat=True))
        status = Counter(Memory.objects.filter(workspace__slug__in=slugs).values_list("status", flat=True))
        marks[form] = {**dict(counts), **{f"status {k}": v for k, v in status.items()}}
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, default=ROOT / "var" / "retrieval.json")
    parser.add_argument("--keep", action="store_true", help="keep the var dir (its database) for --reuse")
    parser.add_argument("--reuse", type=Path, help="a var dir a --keep run left: skip the stack, ingestion and HTTP")
    parser.add_argument(
        "--ask", action="store_true", help="with --reuse: start the stack on that database and ask over HTTP again"
    )
    parser.add_argument("--ask-split", default="", help="with --ask: only this split's questions (tune / heldout)")
    parser.add_argument("--variants", action="store_true", help="also run in-process recall variants")
    parser.add_argument(
        "--leave-db-running", action="store_true", help="with --reuse: do not stop the database (a stack uses it)"
    )
    parser.add_argument("--conversations", type=int, default=0, help="only the first N of each split (0: all)")
    args = parser.parse_args()

    conversations = load(args.data)
    if args.conversations:
        conversations = [c for split in ("tune", "heldout") for c in conversations if c["split"] == split][:]
        conversations = [c for c in conversations if c["split"] == "tune"][: args.conversations] + [
            c for c in conversations if c["split"] == "heldout"
        ][: args.conversations]
    started = dt.datetime.now(dt.UTC)
    print(f"{started:%Y-%m-%d %H:%M} UTC · {cpu_model()} · {os.cpu_count()} cores · load {load_average()}")
    print(
        f"{len(conversations)} conversations, {sum(len(c['turns']) for c in conversations):,} turns, "
        f"{sum(len(c['observations']) for c in conversations):,} observations, "
        f"{sum(len(c['questions']) for c in conversations):,} questions"
    )
    var_dir = args.reuse or Path(tempfile.mkdtemp(prefix="memoryhub-retrieval-"))
    state_file = var_dir / "retrieval-state.json"
    try:
        if args.reuse:
            state = json.loads(state_file.read_text())
            if args.ask:
                with make_run_stack(var_dir) as stack:
                    state["answers"] = ask_http(stack, conversations, state["workspaces"], args.ask_split)
        else:
            with make_run_stack(var_dir) as stack:
                t0 = time.monotonic()
                workspaces = ingest(stack, conversations)
                print(f"ingested in {time.monotonic() - t0:.0f}s; waiting for embedding and detection …", flush=True)
                # /status counts one workspace's backlog: wait for every workspace's, the last committed first.
                drained = 0.0
                for workspace in reversed(list(workspaces.values())):
                    drained += wait_until_checked(Agent(stack.port, workspace["key"]))
                print(f"all embedded and checked {drained:.0f}s after the last commit; asking …", flush=True)
                answers = ask_http(stack, conversations, workspaces)
                state = {"workspaces": workspaces, "answers": answers, "drained_s": drained}
                state_file.write_text(json.dumps(state))
        django_on(var_dir)
        marks = detection_marks(conversations)
        print(f"detection marks: {marks}")
        rows, latencies = evaluate(conversations, state["workspaces"], state["answers"], args.variants)
        table = summarise(rows)
        print_tables(table, latencies)
        print(f"load average after: {load_average()}")
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "date": f"{started:%Y-%m-%d %H:%M} UTC",
                    "machine": f"{cpu_model()} · {os.cpu_count()} cores",
                    "load_after": load_average(),
                    "detection_marks": marks,
                    "results": table,
                    "latency_ms": {
                        m: {"p50": percentile(v, 50), "p95": percentile(v, 95)} for m, v in latencies.items()
                    },
                },
                indent=1,
            )
        )
        print(f"→ {args.json}")
    finally:
        if not (args.reuse and args.leave_db_running and not args.ask):
            subprocess.run(
                [sys.executable, "manage.py", "stop_db"],
                cwd=ROOT,
                env={**os.environ, "MEMORYHUB_VAR_DIR": str(var_dir)},
                check=False,
                capture_output=True,
            )
        if not args.keep and not args.reuse:
            shutil.rmtree(var_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
