"""Texts that several test modules write."""

from __future__ import annotations

# Two notes naming one person (an entity), and sharing no other word.
SEEKER = "The periwinkle trowel went back to Ottoline Brackwater on Sunday."
OTHER = "Her greenhouse needs glazing, says Ottoline Brackwater."
