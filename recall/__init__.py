"""Hybrid recall, passive context and the pre-action check: how agents read the memory.

Above ``conflicts``: recall flags the facts in dispute and the pre-action check
asks about them, so both read uncertainties; nothing below imports this package.
"""
