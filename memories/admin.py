from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from memories.models import Event, Link, Memory


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin[Memory]):
    list_display = ["text", "kind", "workspace", "agent", "reliability", "status", "confidence", "recorded_at"]
    list_filter = ["workspace", "kind", "reliability", "status", "source"]
    search_fields = ["text", "key", "scope", "agent"]
    readonly_fields = ["id", "embedding", "embedded_at", "embedding_model", "updated_at"]
    exclude = ["search_vector"]
    raw_id_fields = ["superseded_by", "agent_key"]


@admin.register(Link)
class LinkAdmin(admin.ModelAdmin[Link]):
    list_display = ["src", "rel", "dst", "workspace", "created_at"]
    list_filter = ["rel", "workspace"]
    raw_id_fields = ["src", "dst"]


@admin.register(Event)
class EventAdmin(admin.ModelAdmin[Event]):
    """The audit trail is append-only: viewable, never editable."""

    list_display = ["created_at", "verb", "actor_type", "actor", "workspace", "automatic"]
    list_filter = ["verb", "actor_type", "automatic", "workspace"]
    search_fields = ["actor", "reason"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
