"""Run the CLI as `python -m profiles`."""

from .cli import main

main()
