"""``python -m train.rllib CONFIG [key=value ...]``: see :mod:`train.rllib.cli`."""

import sys

from train.rllib.cli import main

sys.exit(main())
