"""The agents' door over HTTP: JSON views under /api/v1/ for the operations in
agents/operations.py. Every refusal is {"error": {code, message}} with a 4xx status."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import wraps
from typing import Any, NoReturn

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from agents.openapi import SPEC
from agents.operations import (
    ask_question,
    authority,
    commit_turn,
    context,
    dig_packets,
    extract_part,
    link_question,
    open_questions,
    propose,
    read_node,
    recall_packets,
    remember,
    waiting_for_owner,
    walk,
)
from agents.params import check_fields, check_text
from memory.errors import Forbidden, GroveError, Invalid, TooLarge
from memory.models import ApiToken
from memory.tokens import RateLimited, authenticate


def error_response(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def _no_constant(name: str) -> Any:
    raise Invalid(f"malformed JSON: {name} is not a JSON number", code="malformed_json")


def _finite(text: str) -> float:
    """A JSON float, refused when it overflows to infinity (1e400): no id, limit or budget may
    be infinite, and int(inf) would raise past every check."""
    value = float(text)
    if not math.isfinite(value):
        raise Invalid(f"malformed JSON: {text[:40]} is out of range", code="malformed_json")
    return value


def _json_body(request: HttpRequest) -> dict[str, Any]:
    """The request's JSON object. Refuses (TooLarge) bodies over GROVE_MAX_REQUEST_BYTES by the
    declared Content-Length before reading and by the actual length after; (Invalid) anything
    that is not a JSON object."""
    limit = settings.GROVE_MAX_REQUEST_BYTES
    declared = request.headers.get("content-length") or "0"
    try:
        declared_bytes = int(declared)
    except ValueError:
        raise Invalid("Content-Length is not a number", code="bad_request") from None
    too_large = TooLarge(f"request body over {limit} bytes", code="request_too_large")
    if declared_bytes > limit:
        raise too_large
    try:
        raw = request.body
    except RequestDataTooBig:
        raise too_large from None
    if len(raw) > limit:
        raise too_large
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Invalid(f"malformed JSON: {exc}", code="malformed_json") from None
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        raise Invalid(
            "malformed JSON: a number has too many digits", code="malformed_json"
        ) from None
    except RecursionError:
        raise Invalid("malformed JSON: it nests too deeply", code="malformed_json") from None
    if not isinstance(data, dict):
        raise Invalid("the request body must be a JSON object", code="malformed_json")
    return data


def agent_endpoint(
    *methods: str,
) -> Callable[[Callable[..., tuple[int, dict[str, Any]]]], Callable[..., JsonResponse]]:
    """An API view: bearer-authenticated (so CSRF-exempt and outside the login middleware),
    method-checked, JSON in (POST) and out, every refusal as {"error": {code, message}}."""

    def wrap(view: Callable[..., tuple[int, dict[str, Any]]]) -> Callable[..., JsonResponse]:
        @csrf_exempt
        @login_not_required
        @wraps(view)
        def endpoint(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
            if request.method not in methods:
                response = error_response(
                    405, "method_not_allowed", f"use {' or '.join(methods)} here"
                )
                response["Allow"] = ", ".join(methods)
                return response
            try:
                token = authenticate(request.headers.get("Authorization"))
                data = _json_body(request) if request.method == "POST" else request.GET.dict()
                # Every field of every operation, screened once: text both engines can store.
                check_text(data if request.method == "POST" else dict(request.GET.lists()))
                status, payload = view(request, token, data, *args, **kwargs)
            except RateLimited as exc:
                response = error_response(exc.status, exc.code, exc.message)
                response["Retry-After"] = str(exc.retry_after)
                return response
            except GroveError as exc:
                return error_response(exc.status, exc.code, exc.message)
            return JsonResponse(payload, status=status)

        return endpoint

    return wrap


@agent_endpoint("POST")
def nodes(
    request: HttpRequest, token: ApiToken, data: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    return remember(token, data)


@agent_endpoint("GET")
def node(
    request: HttpRequest, token: ApiToken, data: dict[str, Any], node_id: int
) -> tuple[int, dict[str, Any]]:
    return 200, read_node(token, node_id, as_of=data.get("as_of"))


@agent_endpoint("GET")
def node_authority(
    request: HttpRequest, token: ApiToken, data: dict[str, Any], node_id: int
) -> tuple[int, dict[str, Any]]:
    return 200, authority(token, node_id, as_of=data.get("as_of"))


@agent_endpoint("POST")
def node_propose(
    request: HttpRequest, token: ApiToken, data: dict[str, Any], node_id: int
) -> tuple[int, dict[str, Any]]:
    return 200, propose(token, node_id, data)


@agent_endpoint("POST")
def node_extract(
    request: HttpRequest, token: ApiToken, data: dict[str, Any], node_id: int
) -> tuple[int, dict[str, Any]]:
    return extract_part(token, node_id, data)


@agent_endpoint("POST")
def owner_only(
    request: HttpRequest, token: ApiToken, data: dict[str, Any], node_id: int, act: str
) -> NoReturn:
    raise Forbidden(
        f"{act} is an act of the owner, on the dashboard; agents may only propose",
        code="owner_only",
    )


@agent_endpoint("POST")
def turns(
    request: HttpRequest, token: ApiToken, data: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    return commit_turn(token, data)


@agent_endpoint("GET")
def recall_view(
    request: HttpRequest, token: ApiToken, data: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    domains = request.GET.getlist("domain")
    return 200, recall_packets(
        token,
        q=data.get("q"),
        scope=data.get("scope"),
        domain=",".join(domains) if domains else None,
        limit=data.get("limit"),
        as_of=data.get("as_of"),
        why=data.get("why"),
    )


@agent_endpoint("GET")
def dig_view(
    request: HttpRequest, token: ApiToken, data: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    check_fields(data, allowed=frozenset({"q", "scope", "domain", "limit", "why"}), required=("q",))
    domains = request.GET.getlist("domain")
    return 200, dig_packets(
        token,
        q=data.get("q"),
        scope=data.get("scope"),
        domain=",".join(domains) if domains else None,
        limit=data.get("limit"),
        why=data.get("why"),
    )


@agent_endpoint("GET", "POST")
def context_view(
    request: HttpRequest, token: ApiToken, data: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    check_fields(
        data,
        allowed=frozenset({"q", "budget", "scope", "domain", "limit", "as_of"}),
        required=("q",),
    )
    return 200, context(token, **data)


@agent_endpoint("POST")
def walk_view(
    request: HttpRequest, token: ApiToken, data: dict[str, Any], action: str
) -> tuple[int, dict[str, Any]]:
    return 200, walk(token, action, data)


@agent_endpoint("POST")
def questions_view(
    request: HttpRequest, token: ApiToken, data: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    return ask_question(token, data)


@agent_endpoint("POST")
def question_link(
    request: HttpRequest, token: ApiToken, data: dict[str, Any], node_id: int, act: str
) -> tuple[int, dict[str, Any]]:
    return 200, link_question(token, node_id, act, data)


@agent_endpoint("GET")
def node_questions(
    request: HttpRequest, token: ApiToken, data: dict[str, Any], node_id: int
) -> tuple[int, dict[str, Any]]:
    return 200, open_questions(token, node_id)


@agent_endpoint("GET")
def waiting_view(
    request: HttpRequest, token: ApiToken, data: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    check_fields(data, allowed=frozenset(), required=())
    return 200, waiting_for_owner(token)


@csrf_exempt
@login_not_required
def no_route(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Any path under /api/v1/ that names no endpoint: a JSON 404, never the HTML page."""
    return error_response(
        404, "no_route", f"no endpoint {request.path!r}; see /api/v1/openapi.json"
    )


@csrf_exempt
@login_not_required
def openapi_json(request: HttpRequest) -> JsonResponse:
    """The OpenAPI description of this API; public (it describes, it holds nothing)."""
    if request.method != "GET":
        return error_response(405, "method_not_allowed", "use GET here")
    return JsonResponse(SPEC)
