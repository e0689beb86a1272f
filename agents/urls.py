"""Routes of the agent JSON API, mounted at /api/v1/ (described by agents/openapi.py)."""

from __future__ import annotations

from django.urls import path, re_path

from agents import operations
from agents import views as api

app_name = "api"

urlpatterns = [
    path("openapi.json", api.openapi_json, name="openapi"),
    path("nodes", api.nodes, name="nodes"),
    path("nodes/<int:node_id>", api.node, name="node"),
    path("nodes/<int:node_id>/authority", api.node_authority, name="authority"),
    path("nodes/<int:node_id>/propose", api.node_propose, name="propose"),
    path("nodes/<int:node_id>/extract", api.node_extract, name="extract"),
    path("nodes/<int:node_id>/questions", api.node_questions, name="node-questions"),
    path("questions", api.questions_view, name="questions"),
    *(
        path(f"questions/<int:node_id>/{act}", api.question_link, {"act": act}, name=f"q-{act}")
        for act in ("feed", "answer", "reopen")
    ),
    path("turns", api.turns, name="turns"),
    path("recall", api.recall_view, name="recall"),
    path("context", api.context_view, name="context"),
    *(
        path(f"walk/{action}", api.walk_view, {"action": action}, name=f"walk-{action}")
        for action in ("open", "around", "step", "read")
    ),
    # The owner's acts have no agent route; these answer 403 owner_only so the refusal is explicit.
    *(
        path(f"nodes/<int:node_id>/{act}", api.owner_only, {"act": act}, name=f"refuse-{act}")
        for act in operations.OWNER_ONLY_ACTS
    ),
    # Last: any other path under /api/v1/ answers a JSON 404 (agents parse JSON, not HTML).
    re_path(r"^(?P<rest>.*)$", api.no_route, name="no-route"),
]
