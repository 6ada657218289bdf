"""The web process's application module: what it settles before anything loads numpy."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.common import ROOT

SHOW = "import os; import memoryhub.asgi; print(os.environ['OPENBLAS_NUM_THREADS'])"


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("2", "2")])
def test_the_web_process_runs_numpy_on_one_blas_thread_unless_told_otherwise(given: str | None, expected: str) -> None:
    env = {name: value for name, value in os.environ.items() if name not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env["MEMORYHUB_WARM_MODELS"] = "0"
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given

    shown = subprocess.run(  # noqa: S603 - our own interpreter and a literal script
        [sys.executable, "-c", SHOW], cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=120
    )

    assert shown.stdout.split()[-1] == expected
