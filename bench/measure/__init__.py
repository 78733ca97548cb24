"""bench/loop_measure.py's parts: the bare timers, the rings, the loops, /proc sampling, the doc."""
