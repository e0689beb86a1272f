#!/usr/bin/env python
from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
    from django.core.management import execute_from_command_line

    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if not command.startswith("-"):
        import django

        django.setup()
        from memory.custody.schema import UNGATED_COMMANDS, SchemaMismatch, require_current_schema

        if command not in UNGATED_COMMANDS:
            # The schema gate: no web, worker or command on a database this code does not match.
            try:
                require_current_schema()
            except SchemaMismatch as exc:
                sys.exit(f"grove: {exc}")
    execute_from_command_line(sys.argv)
