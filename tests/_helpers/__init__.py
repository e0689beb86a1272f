"""What several test modules share: one place, imported as tests._helpers.<module>. Fixtures live
in tests/conftest.py; a test module imports helpers from here, never from another test module."""

from __future__ import annotations

from pathlib import Path

# The repository's root (where manage.py is), whatever folder a test module sits in.
ROOT = Path(__file__).resolve().parents[2]
