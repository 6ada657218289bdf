from __future__ import annotations

from django.contrib import admin

from webhooks.models import Delivery, DeliveryAttempt, Webhook


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin[Webhook]):
    list_display = ["url", "workspace", "payload_format", "created_at"]
    list_filter = ["workspace", "payload_format"]
    # The secret signs payloads; the admin never shows it.
    exclude = ["secret"]


class DeliveryAttemptInline(admin.TabularInline[DeliveryAttempt, Delivery]):
    model = DeliveryAttempt
    extra = 0
    readonly_fields = ["number", "status_code", "duration_ms", "error", "succeeded", "created_at"]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin[Delivery]):
    list_display = ["event_type", "webhook", "state", "attempts", "created_at"]
    list_filter = ["event_type", "state"]
    readonly_fields = ["webhook", "event_type", "body", "state", "attempts", "claimed_at", "finished_at"]
    inlines = [DeliveryAttemptInline]
