from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from api.root import api
from dashboard.urls import browser_patterns, review_patterns, workspace_patterns

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("w/<slug:slug>/", include(review_patterns)),
    path("w/<slug:slug>/", include(browser_patterns)),
    path("", include(workspace_patterns)),
]
