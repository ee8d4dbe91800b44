"""Layer simulate: run a configuration (the engine; exact mode when it applies)."""
