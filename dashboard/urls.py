from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from dashboard import auth_views as owner_views
from dashboard import views

urlpatterns = [
    path("", views.overview, name="overview"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("login/link/<uidb64>/<token>/", owner_views.login_link, name="login_link"),
    path("account/password/", owner_views.set_password, name="set_password"),
]
