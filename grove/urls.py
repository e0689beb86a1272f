from __future__ import annotations

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from agents.mcp_http import mcp_endpoint

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin's): no 404 in the log.
    path("favicon.ico", RedirectView.as_view(url=static("grove/favicon.svg"), permanent=True)),
    path("", include("dashboard.urls")),
    path("review/", include("review.urls")),
    path("api/v1/", include("agents.urls")),
    # MCP over Streamable HTTP, at the path MCP hosts expect by default.
    path("mcp", mcp_endpoint, name="mcp"),
]
