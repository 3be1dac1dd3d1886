"""Sandboxed, compile-once rendering of prompt templates."""
