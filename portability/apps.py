from __future__ import annotations

from django.apps import AppConfig


class PortabilityConfig(AppConfig):
    """Moving a workspace in and out of the hub: ``export_workspace``, ``import_workspace``.

    It reads and writes every domain app's tables, so it sits with the interfaces
    (tests/test_layers.py); nothing below it imports it.
    """

    name = "portability"
