"""Sleep: the night's work on the graph, one module per step, and the run protocol that orders
and audits them (run.py). Only the run and the tasks that start it call these steps; the rules
they share with the day (reachability, embedding, recall's word lists) live outside, so nothing
on the write or read paths imports this package. It re-exports nothing: importing a step loads
that step alone.
"""
