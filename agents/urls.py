"""Routes of the agent JSON API, mounted at /api/v1/ (described by agents/openapi.py).

Named as the other apps name theirs: plain snake_case, no namespace; the api_ prefix keeps
them apart from the dashboard's and review's names (node, questions)."""

from __future__ import annotations

from django.urls import path, re_path

from agents import operations
from agents import views as api

urlpatterns = [
    path("openapi.json", api.openapi_json, name="api_openapi"),
    path("nodes", api.nodes, name="api_nodes"),
    path("nodes/<int:node_id>", api.node, name="api_node"),
    path("nodes/<int:node_id>/authority", api.node_authority, name="api_authority"),
    path("nodes/<int:node_id>/propose", api.node_propose, name="api_propose"),
    path("nodes/<int:node_id>/extract", api.node_extract, name="api_extract"),
    path("nodes/<int:node_id>/questions", api.node_questions, name="api_node_questions"),
    path("questions", api.questions_view, name="api_questions"),
    *(
        path(
            f"questions/<int:node_id>/{act}",
            api.question_link,
            {"act": act},
            name=f"api_question_{act}",
        )
        for act in ("feed", "answer", "reopen")
    ),
    path("turns", api.turns, name="api_turns"),
    path("recall", api.recall_view, name="api_recall"),
    path("dig", api.dig_view, name="api_dig"),
    path("context", api.context_view, name="api_context"),
    path("waiting", api.waiting_view, name="api_waiting"),
    *(
        path(f"walk/{action}", api.walk_view, {"action": action}, name=f"api_walk_{action}")
        for action in ("open", "around", "step", "read")
    ),
    # The owner's acts have no agent route; these answer 403 owner_only so the refusal is explicit.
    *(
        path(f"nodes/<int:node_id>/{act}", api.owner_only, {"act": act}, name=f"api_refuse_{act}")
        for act in operations.OWNER_ONLY_ACTS
    ),
    # Last: any other path under /api/v1/ answers a JSON 404 (agents parse JSON, not HTML).
    re_path(r"^(?P<rest>.*)$", api.no_route, name="api_no_route"),
]
