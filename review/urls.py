from __future__ import annotations

from django.urls import path

from review import decay_views, supersede_views, views

urlpatterns = [
    path("", views.review_queue, name="review_queue"),
    path("decays/", decay_views.pending_decays, name="pending_decays"),
    path("decays/<int:node_id>/keep/", decay_views.keep, name="decay_keep"),
    path("decays/<int:node_id>/let-go/", decay_views.let_go, name="decay_let_go"),
    path("<int:node_id>/", views.review_node, name="review_node"),
    path("<int:node_id>/root/", views.review_root, name="review_root"),
    path("<int:node_id>/reject/", views.review_reject, name="review_reject"),
    path("<int:node_id>/seal/", views.review_seal, name="review_seal"),
    path("<int:node_id>/unseal/", views.review_unseal, name="review_unseal"),
    path("<int:node_id>/supersede/", supersede_views.review_supersede, name="review_supersede"),
    path("<int:node_id>/superseded/", supersede_views.review_superseded, name="review_superseded"),
]
