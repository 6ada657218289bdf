from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from api.root import api
from dashboard.urls import browser_patterns, review_patterns, upkeep_patterns, workspace_patterns

handler400 = "memoryhub.error_views.bad_request"
handler403 = "memoryhub.error_views.permission_denied"
handler404 = "memoryhub.error_views.page_not_found"
handler500 = "memoryhub.error_views.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("w/<slug:slug>/", include(review_patterns)),
    path("w/<slug:slug>/", include(browser_patterns)),
    path("w/<slug:slug>/", include(upkeep_patterns)),
    path("", include(workspace_patterns)),
]
