"""Layer run: plan, cache, execute and decide many claims (sweeps, tasks, store, executors, hunts)."""
