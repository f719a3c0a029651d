"""Print one of the two commands README.md opens with: ``main`` or ``tests``.

README.md's first two fenced ``bash`` blocks are the main job and the test run; CI runs
the test block exactly as written, so the README can never drift from what CI does.
"""

import pathlib
import re
import sys

blocks = re.findall(r"```bash\n(.*?)```", pathlib.Path("README.md").read_text(), flags=re.S)
which = {"main": 0, "tests": 1}[sys.argv[1]]
print(" ".join(line.strip().rstrip("\\").strip() for line in blocks[which].strip().splitlines()))
