"""The dashboard's URLs in three namespaces.

``dashboard`` (workspaces, members, keys, webhooks), ``review`` (inbox, decisions, insights)
and ``browser`` (memories, chains).
"""

from __future__ import annotations

from django.urls import path

from dashboard import browser, review, upkeep, webhooks, workspaces

workspace_patterns = (
    [
        path("", workspaces.home, name="home"),
        path("switch/", workspaces.switch, name="switch"),
        path("favicon.ico", workspaces.favicon, name="favicon"),
        path("w/<slug:slug>/", workspaces.workspace_home, name="workspace"),
        path("w/<slug:slug>/members/", workspaces.members, name="members"),
        path("w/<slug:slug>/members/invite/", workspaces.invite, name="invite"),
        path("invite/<str:token>/", workspaces.invitation, name="invitation"),
        path("w/<slug:slug>/keys/", workspaces.keys, name="keys"),
        path("w/<slug:slug>/keys/<int:key_id>/revoke/", workspaces.key_revoke, name="key_revoke"),
        path("w/<slug:slug>/webhooks/", webhooks.webhooks_view, name="webhooks"),
        path("w/<slug:slug>/webhooks/<int:hook_id>/delete/", webhooks.webhook_delete_view, name="webhook_delete"),
    ],
    "dashboard",
)

# Under /w/<slug>/.
review_patterns = (
    [
        path("inbox/", review.inbox_view, name="inbox"),
        path("inbox/pulse/", review.pulse_view, name="pulse"),
        path("cards/dismiss/", review.dismiss_view, name="dismiss"),
        path("cards/<uuid:card_id>/", review.card_view, name="card"),
        path("cards/<uuid:card_id>/answer/", review.answer_view, name="answer"),
        path("cards/<uuid:card_id>/assign/", review.assign_view, name="assign"),
        path("cards/<uuid:card_id>/reopen/", review.reopen_view, name="reopen"),
        path("undo/", review.undo_view, name="undo"),
        path("decisions/", review.decisions_view, name="decisions"),
        path("decisions/<int:event_id>/confirm/", review.decision_action_view, {"action": "confirm"}, name="confirm"),
        path("decisions/<int:event_id>/revert/", review.decision_action_view, {"action": "revert"}, name="revert"),
        path("history/", review.history_view, name="history"),
        path("insights/", review.insights_view, name="insights"),
        path("insights/tolerance/", review.tolerance_view, name="tolerance"),
    ],
    "review",
)

# Under /w/<slug>/.
browser_patterns = (
    [
        path("memories/", browser.browser_view, name="memories"),
        path("memories/<uuid:memory_id>/", browser.memory_view, name="memory"),
        path("memories/<uuid:memory_id>/restore/", browser.memory_action_view, {"action": "restore"}, name="restore"),
        path("memories/<uuid:memory_id>/forget/", browser.memory_action_view, {"action": "forget"}, name="forget"),
        path(
            "memories/<uuid:memory_id>/supersede/",
            browser.memory_action_view,
            {"action": "supersede"},
            name="supersede",
        ),
        path("memories/<uuid:memory_id>/replacements/", browser.replacements_view, name="replacements"),
        path("memories/<uuid:memory_id>/links/<int:link_id>/delete/", browser.unlink_view, name="unlink"),
        path("memories/<uuid:memory_id>/subject/", browser.memory_subject_view, name="subject"),
        path("chains/", browser.chains_view, name="chains"),
    ],
    "browser",
)

# Under /w/<slug>/: background jobs and the uncertainties they and detection leave (issue 24).
upkeep_patterns = (
    [
        path("jobs/", upkeep.jobs_view, name="jobs"),
        path("jobs/run/", upkeep.job_run_view, name="job_run"),
        path("uncertainties/", upkeep.uncertainties_view, name="uncertainties"),
        path(
            "uncertainties/<uuid:uncertainty_id>/resolve/",
            upkeep.uncertainty_action_view,
            {"action": "resolve"},
            name="uncertainty_resolve",
        ),
        path(
            "uncertainties/<uuid:uncertainty_id>/dismiss/",
            upkeep.uncertainty_action_view,
            {"action": "dismiss"},
            name="uncertainty_dismiss",
        ),
        path(
            "uncertainties/<uuid:uncertainty_id>/card/",
            upkeep.uncertainty_action_view,
            {"action": "card"},
            name="uncertainty_card",
        ),
    ],
    "upkeep",
)
