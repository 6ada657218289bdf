from __future__ import annotations

from django.urls import path

from memories import views

app_name = "browser"

urlpatterns = [
    path("memories/", views.browser_view, name="memories"),
    path("memories/<uuid:memory_id>/", views.memory_view, name="memory"),
    path("memories/<uuid:memory_id>/restore/", views.memory_action_view, {"action": "restore"}, name="restore"),
    path("memories/<uuid:memory_id>/forget/", views.memory_action_view, {"action": "forget"}, name="forget"),
    path("memories/<uuid:memory_id>/supersede/", views.memory_action_view, {"action": "supersede"}, name="supersede"),
    path("chains/", views.chains_view, name="chains"),
]
