from __future__ import annotations

from django.contrib import admin

from conflicts.models import Answer, CardFact, ConflictCard, Tolerance, ToleranceChange, Uncertainty


@admin.register(Uncertainty)
class UncertaintyAdmin(admin.ModelAdmin[Uncertainty]):
    list_display = ["uncertainty_type", "severity", "state", "detection_context", "workspace", "created_at"]
    list_filter = ["uncertainty_type", "severity", "state", "detection_context", "workspace"]
    raw_id_fields = ["memory_a", "memory_b"]


class CardFactInline(admin.TabularInline[CardFact, ConflictCard]):
    model = CardFact
    extra = 0
    raw_id_fields = ["memory"]


@admin.register(ConflictCard)
class ConflictCardAdmin(admin.ModelAdmin[ConflictCard]):
    list_display = ["question", "kind", "severity", "state", "detector", "workspace", "created_at"]
    list_filter = ["kind", "severity", "state", "detector", "workspace"]
    search_fields = ["question"]
    raw_id_fields = ["asked_memory", "uncertainty"]
    inlines = [CardFactInline]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin[Answer]):
    list_display = ["card", "choice", "user", "agent_key", "created_at"]
    list_filter = ["choice"]
    raw_id_fields = ["card", "current_memory"]


@admin.register(Tolerance)
class ToleranceAdmin(admin.ModelAdmin[Tolerance]):
    list_display = ["workspace", "value", "updated_at"]


@admin.register(ToleranceChange)
class ToleranceChangeAdmin(admin.ModelAdmin[ToleranceChange]):
    list_display = ["workspace", "value", "delta", "reason", "created_at"]
    list_filter = ["reason", "workspace"]
