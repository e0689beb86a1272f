"""Sleep (memory/sleep/) and what it rests on by day (memory/reach.py, memory/forgetting.py): the
run, decay, promote, crosslink, crossjoin, consolidate, reachability, forgetting."""
