"""MkDocs hook: the notebooks of ``notebooks/`` become pages of the site under ``notebooks/``.

The notebooks live beside the code, where the test run executes them (nbmake), not in ``docs/``;
this hook adds them to the site's files before mkdocs-jupyter turns ``*.ipynb`` files into pages.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

FOLDER = "notebooks"
"""The notebooks' folder in the repository, and their folder in the site."""


@event_priority(100)  # ahead of mkdocs-jupyter's on_files (default priority 0), which makes them pages
def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = Path(config.config_file_path).parent
    for path in sorted((root / FOLDER).glob("*.ipynb")):
        files.append(
            File(
                f"{FOLDER}/{path.name}",
                src_dir=str(root),
                dest_dir=config.site_dir,
                use_directory_urls=config.use_directory_urls,
            )
        )
    return files
