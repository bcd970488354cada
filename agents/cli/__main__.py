"""``python -m agents.cli``: the ``forty-thieves`` command."""

import sys

from agents.cli import main

sys.exit(main())
