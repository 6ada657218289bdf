from __future__ import annotations

from django.urls import path

from workspaces import views

app_name = "dashboard"

urlpatterns = [
    path("", views.home, name="home"),
    path("switch/", views.switch, name="switch"),
    path("w/<slug:slug>/", views.workspace_home, name="workspace"),
    path("w/<slug:slug>/members/", views.members, name="members"),
    path("w/<slug:slug>/keys/", views.keys, name="keys"),
    path("w/<slug:slug>/keys/<int:key_id>/revoke/", views.key_revoke, name="key_revoke"),
]
