"""Subcommands: every module here with a ``register(subparsers, parents)`` is one command."""
