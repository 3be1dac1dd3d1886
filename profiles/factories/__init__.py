"""Factories that create profiles in batches or on demand."""

from .base import ProfileFactory

__all__ = ["ProfileFactory"]
