"""Factories that create profiles in batches: from datasets, from an LLM, or from several combined."""

from .base import ProfileFactory

__all__ = ["ProfileFactory"]
