"""The real django-q2 worker and the real `serve` process (slow: marked worker)."""
