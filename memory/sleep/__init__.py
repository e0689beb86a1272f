"""Sleep: the nightly work on the graph, one module per step (embed lives in memory/embed.py,
which recall and the write path share), and the run protocol that orders and audits them.

Grouped here because these modules change together and only the run (and the owner's lifecycle
acts in decay.py) call them; nothing in the engine's read paths imports from this package.
"""

from memory.sleep.run import SCHEDULE_NAME, STEPS, ensure_schedule, request_sleep, run_sleep

__all__ = ["SCHEDULE_NAME", "STEPS", "ensure_schedule", "request_sleep", "run_sleep"]
