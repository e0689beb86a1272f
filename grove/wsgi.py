from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "grove.settings")
application = get_wsgi_application()

# The schema gate (memory/custody/schema.py): a WSGI server started on a mismatched database
# stops here.
from memory.custody.schema import require_current_schema  # noqa: E402

require_current_schema()
