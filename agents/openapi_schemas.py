"""The component schemas the agent API's OpenAPI description refers to (agents/openapi.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

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
                        "id": {"type": "integer"},
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
