"""Runners that plug tosaconv into the official TOSA test tools (``tosa_verif_run_tests --sut-module``)."""
