"""Web plumbing the apps' views share (htmx requests, acts answered in place, safe redirects).

A leaf: it imports Django and django-htmx only, nothing of Grove's apps, so review, agents and
dashboard may all lean on it without an arrow the layout forbids (tests/test_layout.py).
"""
