"""Jinja's own tests under jinja_suite/ run in a child pytest of their own (test_jinja_suite.py)."""

collect_ignore = ["jinja_suite"]
