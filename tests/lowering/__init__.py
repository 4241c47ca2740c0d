"""Tests of tosaconv.lowering: format-neutral builders both importers share."""
