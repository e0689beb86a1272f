"""Waiting on another process without sleeping blindly."""

from __future__ import annotations

import time


def wait_for(predicate, *, timeout: float = 30.0, interval: float = 0.1):
    """Poll `predicate` until it returns something truthy (and return that), or fail after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(interval)
    raise AssertionError(f"gave up after {timeout}s")
