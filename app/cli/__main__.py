"""``python -m app.cli``: the ``podium`` command."""

from app.cli import main

main()
