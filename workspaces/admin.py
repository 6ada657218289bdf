from __future__ import annotations

from django.contrib import admin

from workspaces.models import AgentKey, Invitation, Membership, Workspace


class MembershipInline(admin.TabularInline[Membership, Workspace]):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin[Workspace]):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin[Membership]):
    list_display = ["user", "workspace", "role", "created_at"]
    list_filter = ["role", "workspace"]
    autocomplete_fields = ["user", "workspace"]


@admin.register(AgentKey)
class AgentKeyAdmin(admin.ModelAdmin[AgentKey]):
    """Keys are created with `create_agent_key` (the secret is shown once); here they can be revoked."""

    list_display = ["name", "workspace", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["workspace"]
    readonly_fields = ["prefix", "secret_hash", "created_at", "last_used_at"]

    def has_add_permission(self, request: object) -> bool:
        return False


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin[Invitation]):
    """Invitations are made on the Members page (the link is shown once there); here they can be read."""

    list_display = ["recipient", "workspace", "role", "created_at", "expires_at", "accepted_at"]
    list_filter = ["role", "workspace"]
    readonly_fields = ["token_hash", "accepted_at", "accepted_by"]
