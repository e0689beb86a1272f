from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
application = get_asgi_application()

# The schema gate (memory/custody/schema.py): an ASGI server started on a mismatched database
# stops here.
from memory.custody.schema import require_current_schema  # noqa: E402

require_current_schema()
