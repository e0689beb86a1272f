from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from dashboard import (
    audit_views,
    browse_views,
    graph_views,
    node_views,
    search_views,
    sleep_views,
    tokens_views,
    views,
)
from dashboard import auth_views as owner_views

urlpatterns = [
    path("", views.overview, name="overview"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("login/link/<uidb64>/<token>/", owner_views.login_link, name="login_link"),
    path("account/password/", owner_views.set_password, name="set_password"),
    path("tokens/", tokens_views.tokens, name="tokens"),
    path("tokens/new/", tokens_views.create_token_view, name="create_token"),
    path("tokens/<str:name>/change/", tokens_views.change_token_view, name="change_token"),
    path("agents/", tokens_views.agents_page, name="agents"),
    path("feed/<str:key>/waiting.atom", views.waiting_feed, name="waiting_feed"),
    path("overview/waiting/", views.overview_waiting, name="overview_waiting"),
    path("search/", search_views.search, name="search"),
    path("search/pick/", search_views.node_pick, name="node_pick"),
    path("nodes/", browse_views.browse_nodes, name="browse_nodes"),
    path("nodes/ground.zip", browse_views.ground_markdown, name="ground_markdown"),
    path("forgotten/", browse_views.forgotten_nodes, name="forgotten"),
    path("forgotten/restore/", browse_views.restore_matching, name="forgotten_restore"),
    path("node/<int:node_id>/", node_views.node_page, name="node"),
    path("graph/", graph_views.domain_graph, name="domain_graph"),
    path("node/<int:node_id>/restore/", audit_views.restore_node, name="restore_node"),
    path("node/<int:node_id>/extract/", node_views.extract_view, name="node_extract"),
    path("audit/", audit_views.audit_log, name="audit_log"),
    *(
        path(
            f"audit/export.{fmt}",
            audit_views.audit_export,
            {"fmt": fmt},
            name=f"audit_export_{fmt}",
        )
        for fmt in audit_views.EXPORTS
    ),
    path("sleep/", sleep_views.sleep_runs, name="sleep_runs"),
    path("sleep/status/", sleep_views.sleep_status, name="sleep_status"),
    path("sleep/run/", sleep_views.run_sleep_now, name="run_sleep_now"),
]
