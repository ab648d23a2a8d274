"""Flow blueprints, the processor registry, and the launchers (all-in-one and one-per-process)."""
