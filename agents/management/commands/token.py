from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.errors import GroveError
from memory.models import ApiToken
from memory.tokens import create_token, revoke_token


class Command(BaseCommand):
    help = "Create, revoke or list agent API tokens (the secret is printed once, on create)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="mint a token scoped to one or more domains")
        create.add_argument("name")
        create.add_argument("--domain", action="append", default=[], dest="domains")
        create.add_argument("--read-only", action="store_true")
        revoke = sub.add_parser("revoke", help="revoke a token by name")
        revoke.add_argument("name")
        sub.add_parser("list", help="list tokens (never their secrets)")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            if action == "create":
                token, secret = create_token(
                    name=options["name"],
                    domains=options["domains"],
                    read_only=options["read_only"],
                )
                self.stderr.write(
                    f"token {token.name} for {', '.join(token.domains)}"
                    f"{' (read-only)' if token.read_only else ''}; "
                    "the secret below is shown once:"
                )
                self.stdout.write(secret)
            elif action == "revoke":
                token = revoke_token(name=options["name"])
                self.stdout.write(f"revoked {token.name} at {token.revoked_at:%Y-%m-%d %H:%M}Z")
            else:
                for token in ApiToken.objects.order_by("name"):
                    state = "revoked" if token.revoked_at else "active"
                    used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
                    mode = "read-only" if token.read_only else "read-write"
                    self.stdout.write(
                        f"{token.name}\t{token.prefix}…\t{','.join(token.domains)}\t{mode}"
                        f"\t{state}\tlast used {used}"
                    )
        except GroveError as exc:
            raise CommandError(exc.message) from exc
