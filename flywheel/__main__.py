"""``python -m flywheel`` runs the CLI."""

from .cli import main

main()
