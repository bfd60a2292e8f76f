"""``python -m torchwm ...``: the same as the ``torchwm`` command."""

import sys

from torchwm.cli import main

sys.exit(main())
