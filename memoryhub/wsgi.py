from __future__ import annotations

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from memoryhub.warmup import WEB, warm_in_background

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

application = get_wsgi_application()

if settings.MEMORYHUB_WARM_MODELS:
    # The first synchronous check then finds the models loaded; serving starts at once.
    warm_in_background(WEB)
