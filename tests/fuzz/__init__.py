"""Fuzzing tosaconv's six input kinds: seed inputs, mutators, and a harness that runs one case."""
