"""Deep Monte-Carlo (``algo: dmc``): a move-scoring network trained on the compiled core.

``scopa train CONFIG`` hands a config with ``algo: dmc``, and ``--resume`` of a DMC run, to
:func:`dmc_dispatch`; docs/training.md ("Deep Monte-Carlo") is the guide. The modules, in the order
a run goes:

============================  ==========================================================================
:mod:`~train.dmc.config`      the keys of a run, checked up front (:class:`~train.dmc.config.DmcConfig`)
:mod:`~train.dmc.learner`     the loop: seeding, the run folder, the learner, evaluation, checkpoints,
                              the report, resuming
:mod:`~train.dmc.actors`      the actors' games, samples, search labels and buffers; the network
:mod:`~train.dmc.workers`     the actors in Ray worker processes (``workers: N``)
:mod:`~train.dmc.agent`       the network at play time (``dmc:PATH``, ``zoo:NAME``): numpy only
:mod:`~train.dmc.net_search`  the network inside the compiled search (``netsearch:CHECKPOINT``)
:mod:`~train.dmc.exploit`     the best-response learner of ``scopa exploit``
============================  ==========================================================================

The learner was once the one module ``train/dmc.py``: the names it had (``from train.dmc import
train, DmcConfig, build_learner``, ...) are still found here, looked up in :mod:`train.dmc.learner`
on first use, so that importing the package (as the ``dmc:PATH`` agents do) loads nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path

_MODULES = frozenset({"actors", "agent", "config", "exploit", "learner", "net_search", "workers"})
"""The package's modules: an attribute by these names is the module (imported by the import system)."""


def dmc_dispatch(config_path: str | None, overrides: list[str], resume: str | None, report: bool = True) -> int | None:
    """Run a DMC config or resume a DMC run; None when neither is one (``scopa train`` goes on)."""
    from train.config import ConfigError
    from train.dmc.config import DmcConfig, is_dmc_config, is_dmc_run

    if not (is_dmc_config(config_path, overrides) or (resume and is_dmc_run(resume))):
        return None
    from train.dmc.learner import resume_config, train

    try:
        if resume:
            cfg = resume_config(Path(resume), config_path, overrides)
        else:
            cfg = DmcConfig.load(config_path, overrides)
    except ConfigError as exc:
        print(f"scopa train: error: {exc}", file=sys.stderr)
        return 2
    try:
        run_dir = train(cfg, resume=bool(resume), report=report)
    except ConfigError as exc:  # found at the start: no CUDA device, no Ray, workers that do not start
        print(f"scopa train: error: {exc}", file=sys.stderr)
        return 2
    print(f"run folder: {run_dir}" + (f" (report: {run_dir / 'report.md'})" if report else ""))
    return 0


def __getattr__(name: str):
    """The names of the former module ``train/dmc.py``, from :mod:`train.dmc.learner` (see above)."""
    if name.startswith("__") or name in _MODULES:  # a module not imported yet: the import system imports it
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from train.dmc import learner

    try:
        return getattr(learner, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
