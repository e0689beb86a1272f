"""The OpenAPI 3.1 description of the agent API, served at /api/v1/openapi.json.

Kept true by tests/agents/test_openapi.py, which walks the URL resolver: every API route is
described here and every path described here resolves. The component schemas (Error, NodeWrite,
Written, Packet) come first: the paths refer to them.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from agents.operations import (
    DEFAULT_CONTEXT_BUDGET,
    MAX_CONTEXT_BUDGET,
    MAX_RECALL_LIMIT,
    OWNER_ONLY_ACTS,
)
from memory.visibility import MAX_ID

# Every integer the API reads is bounded (memory/inputs.py): ids from 1 to MAX_ID.
ID = {"type": "integer", "minimum": 1, "maximum": MAX_ID}
SIGNATURE = {"type": "string", "maxLength": settings.GROVE_MAX_SIGNATURE_CHARS}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            }
        },
    },
    "NodeWrite": {
        "type": "object",
        "required": ["body", "kind", "jurisdiction", "signature"],
        "additionalProperties": False,
        "properties": {
            "body": {"type": "string"},
            "kind": {
                "enum": [
                    "note",
                    "journal",
                    "inference",
                    "synthesis",
                    "hearsay",
                    "utterance",
                    "internet",
                    "import",
                    "question",
                    "draft",
                ]
            },
            "jurisdiction": {"enum": ["home", "wild"]},
            "signature": {
                "type": "string",
                "description": "who wrote it",
                "maxLength": settings.GROVE_MAX_SIGNATURE_CHARS,
            },
            "origins": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {
                        "id": ID,
                        "relation": {"type": "string", "default": "derived_from"},
                    },
                },
            },
            "source": {"type": "string", "maxLength": settings.GROVE_MAX_SOURCE_CHARS},
            "domain": {"type": "string", "description": "default: the token's first"},
            "referent_time": {"type": "string", "format": "date-time"},
            "metadata": {"type": "object"},
        },
    },
    "Written": {
        "type": "object",
        "required": ["id", "body_hash", "status"],
        "properties": {
            "id": {"type": "integer"},
            "body_hash": {"type": "string"},
            "status": {"enum": ["created", "duplicate", "revived"]},
            "jurisdiction": {"type": "string"},
            "kind": {"type": "string"},
            "domain": {"type": "string"},
            "created_at": {"type": "string", "format": "date-time"},
        },
    },
    "Packet": {
        "type": "object",
        "description": "a preview, never a body; leads with jurisdiction",
        "properties": {
            "jurisdiction": {"type": "string"},
            "id": {"type": "integer"},
            "trust": {"type": "string"},
            "kind": {"type": "string"},
            "excerpt": {"type": "string"},
            "source": {"type": "string"},
            "score": {"type": "number"},
            "why": {
                "type": "string",
                "maxLength": 160,
                "description": "why it was found (only when asked: why=true)",
            },
        },
    },
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict[str, Any]:
    meaning = {
        400: (
            "invalid input (malformed JSON, unknown field or kind, a wrong type, a number out "
            "of range, text holding NUL or a lone surrogate, naive date-time ...)"
        ),
        401: "missing, unknown or revoked token",
        403: "read-only token, domain not allowed, or an act reserved to the owner",
        404: (
            "no such node in the token's domains (sealed and rejected nodes included), or a "
            "path whose id is not a whole number (no_route)"
        ),
        409: "content the owner rejected (a tombstone) or a conflicting state",
        413: "request body or node body too large",
        429: "over the token's write limit for this minute (Retry-After says when to retry)",
    }
    return {str(s): _json(_ref("Error"), meaning[s]) for s in statuses}


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _query(
    name: str, schema: dict[str, Any], description: str, required: bool = False
) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
        "description": description,
    }


NODE_ID = {"name": "node_id", "in": "path", "required": True, "schema": ID}
AS_OF = _query(
    "as_of",
    {"type": "string", "format": "date-time"},
    "the graph as it stood then (ISO 8601 with an offset)",
)
READ_ERRORS = _errors(400, 401, 404)
WRITE_ERRORS = _errors(400, 401, 403, 404, 409, 413, 429)
QUESTION_STATE = {
    "type": "object",
    "properties": {"question": {"type": "integer"}, "open": {"type": "boolean"}},
}
TICKET = {
    "type": "object",
    "required": ["ticket"],
    "additionalProperties": False,
    "properties": {"ticket": {"type": "string"}},
}
SCOPE = {"enum": ["home", "wild", "both"]}
BUDGET = {"type": "integer", "minimum": 1, "maximum": MAX_CONTEXT_BUDGET}
LIMIT = {"type": "integer", "minimum": 1, "maximum": MAX_RECALL_LIMIT}


CONTEXT_BODY = {
    "type": "object",
    "required": ["q"],
    "additionalProperties": False,
    "properties": {
        "q": {"type": "string"},
        "budget": {**BUDGET, "default": DEFAULT_CONTEXT_BUDGET},
        "scope": SCOPE,
        "domain": {"type": "string"},
        "limit": LIMIT,
        "as_of": {"type": "string", "format": "date-time"},
    },
}


def _walk(summary: str, request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "requestBody": _body(request),
            "responses": {"200": _json(response, "ok"), **_errors(400, 401, 403, 404, 413)},
        }
    }


SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "Grove agent API",
        "version": "1",
        "description": (
            "Scoped access for agents: bearer tokens limited to domains. Reads outside the "
            "token's domains answer 404; agents may propose but never root, supersede, seal, "
            "unseal or reject. Every refusal is an Error object with a 4xx status, including "
            "malformed JSON (non-finite numbers such as Infinity or 1e400, integers past 4,300 "
            "digits, nesting past the parser's depth: 400 malformed_json), text holding a lone "
            "surrogate (400 bad_text), instants within a day of years 0001/9999 (400 "
            "bad_datetime) and any path under /api/v1/ that names no endpoint (404 no_route)."
        ),
    },
    "servers": [{"url": "/api/v1"}],
    "security": [{"bearer": []}],
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": SCHEMAS,
    },
    "paths": {
        "/openapi.json": {
            "get": {
                "summary": "This description",
                "security": [],
                "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1 document")},
            }
        },
        "/nodes": {
            "post": {
                "summary": "Write a node through the write path",
                "requestBody": _body(_ref("NodeWrite")),
                "responses": {
                    "201": _json(_ref("Written"), "created"),
                    "200": _json(_ref("Written"), "an existing live node (duplicate or revived)"),
                    **WRITE_ERRORS,
                },
            }
        },
        "/nodes/{node_id}": {
            "get": {
                "summary": "Read one node's full body (counts as an access); a forgotten node "
                "your own dig found within a day is brought back by this read (404 otherwise)",
                "parameters": [NODE_ID, AS_OF],
                "responses": {"200": _json({"type": "object"}, "the node"), **READ_ERRORS},
            }
        },
        "/nodes/{node_id}/authority": {
            "get": {
                "summary": "The node's authority record and derived trust",
                "parameters": [NODE_ID, AS_OF],
                "responses": {"200": _json({"type": "object"}, "report"), **READ_ERRORS},
            }
        },
        "/nodes/{node_id}/propose": {
            "post": {
                "summary": "Propose the node for rooting (the owner decides)",
                "parameters": [NODE_ID],
                "requestBody": {
                    "required": False,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {"reason": {"type": "string"}},
                            }
                        }
                    },
                },
                "responses": {
                    "200": _json({"type": "object"}, "proposed"),
                    **_errors(400, 401, 403, 404, 409),
                },
            }
        },
        "/nodes/{node_id}/extract": {
            "post": {
                "summary": (
                    "Make the verbatim span body[start:end] (character offsets, end excluded; "
                    "surrounding whitespace trimmed) a node nested in this one"
                ),
                "parameters": [NODE_ID],
                "requestBody": _body(
                    {
                        "type": "object",
                        "required": ["start", "end"],
                        "additionalProperties": False,
                        "properties": {
                            "start": {"type": "integer", "minimum": 0, "maximum": MAX_ID},
                            "end": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                            "signature": {**SIGNATURE, "description": "default: the agent"},
                        },
                    }
                ),
                "responses": {
                    "201": _json(_ref("Written"), "the extract"),
                    **_errors(400, 401, 403, 404, 409, 413),
                },
            }
        },
        **{
            f"/nodes/{{node_id}}/{act}": {
                "post": {
                    "summary": f"Refused: {act} is reserved to the owner",
                    "parameters": [NODE_ID],
                    "responses": _errors(400, 401, 403, 404),
                }
            }
            for act in OWNER_ONLY_ACTS
        },
        "/questions": {
            "post": {
                "summary": "Plant an open question about nodes (answering it roots nothing)",
                "requestBody": _body(
                    {
                        "type": "object",
                        "required": ["body", "about"],
                        "additionalProperties": False,
                        "properties": {
                            "body": {"type": "string"},
                            "about": {"type": "array", "minItems": 1, "items": ID},
                            "domain": {"type": "string"},
                        },
                    }
                ),
                "responses": {"201": _json(QUESTION_STATE, "planted"), **WRITE_ERRORS},
            }
        },
        **{
            f"/questions/{{node_id}}/{act}": {
                "post": {
                    "summary": summary,
                    "parameters": [NODE_ID],
                    "requestBody": _body(
                        {
                            "type": "object",
                            "required": ["node"],
                            "additionalProperties": False,
                            "properties": {"node": ID},
                        }
                    ),
                    "responses": {"200": _json(QUESTION_STATE, "linked"), **WRITE_ERRORS},
                }
            }
            for act, summary in (
                ("feed", "A node bears on the question (node_id is the question)"),
                ("answer", "A node answers the question"),
                ("reopen", "A node reopens an answered question"),
            )
        },
        "/nodes/{node_id}/questions": {
            "get": {
                "summary": "Open questions about or fed by the node (previews)",
                "parameters": [NODE_ID],
                "responses": {"200": _json({"type": "object"}, "questions"), **READ_ERRORS},
            }
        },
        "/turns": {
            "post": {
                "summary": "Commit a user/assistant exchange to the scroll as a pair",
                "requestBody": _body(
                    {
                        "type": "object",
                        "required": ["conversation", "user", "assistant"],
                        "additionalProperties": False,
                        "properties": {
                            "conversation": {"type": "string"},
                            "user": {"type": "string"},
                            "assistant": {"type": "string"},
                            "referent_time": {"type": "string", "format": "date-time"},
                            "domain": {"type": "string"},
                            "signature": SIGNATURE,
                        },
                    }
                ),
                "responses": {"201": _json(_ref("Written"), "the pair"), **WRITE_ERRORS},
            }
        },
        "/recall": {
            "get": {
                "summary": "Previews for a query (never bodies; does not count as reading)",
                "parameters": [
                    _query("q", {"type": "string"}, "the query", required=True),
                    _query("scope", SCOPE, "default home"),
                    _query("domain", {"type": "string"}, "narrow to these of the token's"),
                    _query("limit", LIMIT, f"max {MAX_RECALL_LIMIT}"),
                    AS_OF,
                    _query("why", {"type": "boolean"}, "each packet says why it was found"),
                ],
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {
                                "results": {"type": "array", "items": _ref("Packet")},
                                "forgotten_matches": {
                                    "type": "integer",
                                    "description": "decayed nodes you may see that also "
                                    "matched (at most 1000): GET /dig finds them",
                                },
                                "other_scopes": {
                                    "type": "object",
                                    "additionalProperties": {"type": "integer"},
                                    "description": "for each scope not searched (home: wild; "
                                    "wild: home; both: none), how many live nodes you may see "
                                    "there also matched (at most 1000 each): recall again with "
                                    "that scope when the results do not answer",
                                },
                            },
                        },
                        "live packets, best first, how many forgotten nodes matched and how "
                        "many the other scopes hold",
                    ),
                    **READ_ERRORS,
                },
            }
        },
        "/dig": {
            "get": {
                "summary": "Previews of forgotten (decayed) nodes for a query, ranked as recall "
                "ranks, each saying when and why it decayed; logged as a dig. Dig when recall "
                "answers nothing good enough and names forgotten_matches. Reading one of these "
                "ids (GET /nodes/{node_id}) within a day brings it back, with what it holds",
                "parameters": [
                    _query("q", {"type": "string"}, "the query", required=True),
                    _query("scope", {"enum": ["home", "wild", "both"]}, "default home"),
                    _query("domain", {"type": "string"}, "narrow to these of the token's"),
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "max 100"),
                    _query("why", {"type": "boolean"}, "each packet says why it was found"),
                ],
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {
                                "results": {
                                    "type": "array",
                                    "items": {
                                        "allOf": [
                                            _ref("Packet"),
                                            {
                                                "type": "object",
                                                "properties": {
                                                    "decayed": {"type": "boolean"},
                                                    "decayed_at": {
                                                        "type": "string",
                                                        "format": "date-time",
                                                    },
                                                    "decay_reason": {"type": "string"},
                                                    "decayed_why": {"type": "string"},
                                                },
                                            },
                                        ]
                                    },
                                }
                            },
                        },
                        "forgotten packets, best first",
                    ),
                    **READ_ERRORS,
                },
            }
        },
        "/waiting": {
            "get": {
                "summary": "How much waits for the owner's review in the token's domains, and a "
                "sentence to say it (reading it changes nothing)",
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {
                                "waiting": {"type": "integer"},
                                "in_queue": {"type": "integer"},
                                "aside": {"type": "integer"},
                                "yours": {"type": "integer"},
                                "oldest_days": {"type": ["integer", "null"]},
                                "message": {"type": "string"},
                            },
                        },
                        "what waits",
                    ),
                    **READ_ERRORS,
                },
            }
        },
        "/context": {
            **{
                method: {
                    "summary": "Bodies for a query within a token budget (each one a read)",
                    **(
                        {
                            "parameters": [
                                _query("q", {"type": "string"}, "the query", required=True),
                                _query("budget", BUDGET, "approx tokens (chars/4)"),
                                _query("scope", SCOPE, "home"),
                                _query("domain", {"type": "string"}, "narrow"),
                                _query("limit", LIMIT, "recall limit"),
                                AS_OF,
                            ]
                        }
                        if method == "get"
                        else {"requestBody": _body(CONTEXT_BODY)}
                    ),
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "budget": {"type": "integer"},
                                    "used": {"type": "integer"},
                                    "skipped": {"type": "integer"},
                                    "items": {"type": "array", "items": {"type": "object"}},
                                },
                            },
                            "bodies that fit",
                        ),
                        **READ_ERRORS,
                    },
                }
                for method in ("get", "post")
            }
        },
        "/walk/open": _walk(
            "Open a walk at a node: a ticket",
            {
                "type": "object",
                "required": ["node_id"],
                "additionalProperties": False,
                "properties": {
                    "node_id": ID,
                    "scope": SCOPE,
                    "as_of": {"type": "string", "format": "date-time"},
                },
            },
            TICKET,
        ),
        "/walk/around": _walk(
            "Previews of the lawful neighbours, with routes", TICKET, {"type": "object"}
        ),
        "/walk/step": _walk(
            "Spend the ticket to step along a disclosed route: a new ticket",
            {
                "type": "object",
                "required": ["ticket", "direction", "target"],
                "additionalProperties": False,
                "properties": {
                    "ticket": {"type": "string"},
                    "direction": {"enum": ["in", "out", "next", "prev", "deeper", "shallower"]},
                    "target": ID,
                },
            },
            TICKET,
        ),
        "/walk/read": _walk("Read the ticket's node (a read)", TICKET, {"type": "object"}),
    },
}
