"""Layer model: what a run is made of (parameters, randomness, participation, delays, traces, fits)."""
