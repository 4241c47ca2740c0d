"""Tests of tosaconv.emit: schema wire compatibility, reference-model runs, round trips, errors."""
