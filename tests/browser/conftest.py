"""Browser tests: Playwright driving Debian's chromium against pytest-django's live server."""

from __future__ import annotations

import os
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"

# Playwright's sync API keeps an event loop on the test thread; the ORM calls
# the tests make for setup are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-gpu"],
    }


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)
