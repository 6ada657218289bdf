from __future__ import annotations

from django.apps import AppConfig


class ConflictsConfig(AppConfig):
    name = "conflicts"
