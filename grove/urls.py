from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("dashboard.urls")),
    path("review/", include("review.urls")),
    path("api/v1/", include("agents.urls")),
]
