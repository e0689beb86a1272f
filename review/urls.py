from __future__ import annotations

from django.urls import path

from review import (
    bulk_views,
    decay_views,
    drift_views,
    question_views,
    supersede_views,
    views,
    why_views,
)

urlpatterns = [
    path("", views.review_queue, name="review_queue"),
    path("bulk/", bulk_views.review_bulk, name="review_bulk"),
    path("batches/<slug:batch>/undo/", bulk_views.undo, name="batch_undo"),
    path("questions/", question_views.question_list, name="questions"),
    path("questions/plant/", question_views.question_plant, name="question_plant"),
    path("questions/<int:question_id>/", question_views.question_page, name="question"),
    path("questions/<int:question_id>/feed/", question_views.question_feed, name="question_feed"),
    path(
        "questions/<int:question_id>/answer/",
        question_views.question_answer,
        name="question_answer",
    ),
    path(
        "questions/<int:question_id>/reopen/",
        question_views.question_reopen,
        name="question_reopen",
    ),
    path("drift/", drift_views.drift_list, name="review_drift"),
    path("drift/<int:node_id>/keep/", drift_views.keep_words, name="drift_keep"),
    path("decays/", decay_views.pending_decays, name="pending_decays"),
    path("decays/release/", decay_views.release, name="decays_release"),
    path("decays/bulk/", decay_views.bulk, name="decay_bulk"),
    path("decays/<int:node_id>/keep/", decay_views.keep, name="decay_keep"),
    path("decays/<int:node_id>/let-go/", decay_views.let_go, name="decay_let_go"),
    path("decays/<int:node_id>/undo/", decay_views.undo_let_go, name="decay_undo"),
    path("<int:node_id>/", views.review_node, name="review_node"),
    path("<int:node_id>/root/", views.review_root, name="review_root"),
    path("<int:node_id>/reject/", views.review_reject, name="review_reject"),
    *(
        path(f"<int:node_id>/{act}/", views.review_act, {"act": act}, name=f"review_{act}")
        for act in views.ONE_CLICK_ACTS
    ),
    path("<int:node_id>/why/", why_views.why_true, name="why_true"),
    path("<int:node_id>/supersede/", supersede_views.review_supersede, name="review_supersede"),
    path("<int:node_id>/superseded/", supersede_views.review_superseded, name="review_superseded"),
]
