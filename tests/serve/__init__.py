"""Tests of the conversion server's parts (tosaconv.serve); the served commands are tested in tests/cli/test_server.py."""
