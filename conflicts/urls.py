from __future__ import annotations

from django.urls import path

from conflicts import views

app_name = "review"

urlpatterns = [
    path("inbox/", views.inbox_view, name="inbox"),
    path("cards/<uuid:card_id>/", views.card_view, name="card"),
    path("cards/<uuid:card_id>/answer/", views.answer_view, name="answer"),
    path("undo/", views.undo_view, name="undo"),
    path("decisions/", views.decisions_view, name="decisions"),
    path("decisions/<int:event_id>/confirm/", views.decision_action_view, {"action": "confirm"}, name="confirm"),
    path("decisions/<int:event_id>/revert/", views.decision_action_view, {"action": "revert"}, name="revert"),
    path("insights/", views.insights_view, name="insights"),
    path("insights/tolerance/", views.tolerance_view, name="tolerance"),
]
