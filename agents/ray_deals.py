"""Deals played on a Ray cluster: the ``--ray [ADDRESS]`` backend of the evaluations.

``scopa eval``, ``scopa tournament``, ``scopa leaderboard`` and ``benchmarks/leaderboard.py`` play
their deals in this machine's processes (``--workers N``) by default. With ``--ray`` they hand the
same chunks of deals to a :class:`RayCluster` instead, which runs each chunk as a Ray task of one
CPU and gives the results back in this process as they finish:

* :func:`agents.matches.run_deals` (the Python harness) sends chunks of up to 8 deals, each deal
  played in every rotation (:func:`agents.matches.play_deals`);
* :func:`agents.compiled.play_deals_compiled` (the compiled core) sends one task per rotation and
  batch of 1,024 deals, the batches of a local run, since the searching players' seeds are drawn per
  batch; a task builds its compiled players from the match's specs.

Every deal's seed and every agent's seed come from the master seed and the deal's number, so where
a deal is played changes nothing: the same seed gives the same report, row and rating as a local run.

Where: ``address=""`` starts a Ray of the run's own on this machine with ``num_cpus`` CPUs (never a
cluster found through ``RAY_ADDRESS``); ``"auto"`` joins the cluster started on this machine with
``ray start --head``; ``"HOST:PORT"`` (the head's GCS port, 6379 by default) or ``"ray://HOST:10001"``
(Ray Client) joins a cluster from another machine, checked to answer within
:data:`ADDRESS_SECONDS` first. A Ray already initialized in this process (a test's) is used as it is.
The kit's packages are shipped to a joined cluster's nodes (Ray's ``py_modules``), so they run this
machine's code; the kit must be installed there for its dependencies and agent entry points.

Ray core is an optional dependency (``pip install "ray>=2.60,<3"``, part of the ``all`` extra),
imported only when a cluster is opened: without ``--ray`` nothing here is imported.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agents.matches import STOP_GRACE

RAY_MISSING = 'ray is not installed: pip install "ray>=2.60,<3" (or pip install -e ".[all]")'
ADDRESS_SECONDS = 5.0
"""How long a cluster's address may take to answer."""
ADDRESS_FORMS = "HOST:PORT, ray://HOST:PORT or auto (or nothing: a local Ray)"
KIT_ROOT = Path(__file__).resolve().parent.parent
KIT_PACKAGES = ("scopa_env", "agents", "train")
"""The kit's packages, shipped to a joined cluster's nodes: folders beside this one (never imported from here)."""


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


def check_address(address: str, timeout: float = ADDRESS_SECONDS) -> None:
    """Refuse, in one line, an address that is not a Ray address or does not answer within ``timeout``.

    ``""`` (a local Ray) and ``"auto"`` (ray.init finds the local cluster, or says there is none) pass.

    Raises:
        ValueError: not ``HOST:PORT`` or ``ray://HOST:PORT``, or nothing accepts a connection there.
    """
    if address in ("", "auto"):
        return
    hostport = address.split("://", 1)[1] if address.startswith("ray://") else address
    host, sep, port = hostport.rstrip("/").rpartition(":")
    if "://" in hostport or not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--ray {address}: not a Ray cluster's address ({ADDRESS_FORMS}); put --ray after the agents")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ValueError(
            f"--ray {address}: cannot reach the Ray cluster within {timeout:g}s ({exc.strerror or exc})"
        ) from None


def check_ray(address: str | None) -> None:
    """Refuse ``--ray ADDRESS`` in one line before any work: ray missing, or an address that is not one or
    does not answer (:func:`check_address`); ``None`` (no ``--ray``) passes.

    Raises:
        ValueError: as :class:`RayCluster` would on connecting.
    """
    if address is None:
        return
    if not ray_available():
        raise ValueError(RAY_MISSING)
    check_address(address)


def _call(fn: Callable, args: tuple) -> tuple[Any, float]:
    """A task's body on a worker: ``fn(*args)`` with one BLAS thread, and the CPU seconds it took."""
    from threadpoolctl import threadpool_limits

    start = time.process_time()
    with threadpool_limits(limits=1, user_api="blas"):
        out = fn(*args)
    return out, time.process_time() - start


class RayCluster:
    """Where deals play with ``--ray``: a Ray of this run's own, or a running cluster (module docstring).

    Connects on creation and disconnects (stopping a Ray it started) on :meth:`close`; a context manager.

    Raises:
        ValueError: one line: ray is not installed, the address is not one or does not answer, or
            Ray cannot join it.
    """

    def __init__(self, address: str = "", num_cpus: int | None = None) -> None:
        check_ray(address)
        import ray

        self.address = address
        self.owns = False
        if not ray.is_initialized():
            self._init(ray, address, num_cpus)
            self.owns = True
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote = ray.remote(num_cpus=1)(_call)

    @staticmethod
    def _init(ray, address: str, num_cpus: int | None) -> None:
        quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
        if not address:
            ray.init(address="local", num_cpus=num_cpus, **quiet)
            return
        modules = [str(KIT_ROOT / name) for name in KIT_PACKAGES if (KIT_ROOT / name).is_dir()]
        try:
            ray.init(address=address, runtime_env={"py_modules": modules}, **quiet)
        except Exception as exc:  # ray raises several types (ConnectionError, RuntimeError, ...)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            hint = ""
            if "RAY_AUTH_MODE" not in os.environ:  # Ray 2.60 starts clusters with token authentication
                hint = " (if the cluster uses token authentication: export RAY_AUTH_MODE=token and its RAY_AUTH_TOKEN)"
            raise ValueError(f"--ray {address}: cannot join the Ray cluster: {first}{hint}") from None

    def describe(self) -> str:
        where = f"the Ray cluster at {self.address}" if self.address else "a local Ray"
        return f"{self.cpus} CPU(s) of {where}"

    def run(
        self,
        fn: Callable,
        tasks: Sequence[tuple],
        on_done: Callable[[int, Any], None],
        deadline: float | None = None,
    ) -> float:
        """``fn(*tasks[i])`` for every ``i``, each a task of one CPU; ``on_done(i, result)`` here as each finishes.

        ``fn`` must be a module-level function (the workers import it by name). Ctrl-C, or
        ``time.perf_counter()`` passing ``deadline``, stops the run: the tasks that finish within
        :data:`agents.matches.STOP_GRACE` seconds are still handed to ``on_done``, the others are
        cancelled, and ``KeyboardInterrupt`` is raised.

        Returns:
            the CPU seconds the finished tasks took on the workers.
        """
        import ray

        pending = {self._remote.remote(fn, tuple(args)): i for i, args in enumerate(tasks)}
        cpu = 0.0

        def take(ref) -> None:
            nonlocal cpu
            i = pending.pop(ref)
            out, seconds = ray.get(ref)
            cpu += seconds
            on_done(i, out)

        try:
            while pending:
                if deadline is not None and time.perf_counter() > deadline:
                    raise KeyboardInterrupt
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    take(ref)
        except KeyboardInterrupt:
            print(
                f"\nstopping: the deals in progress get {STOP_GRACE:g} s to finish, then the Ray tasks are cancelled",
                file=sys.stderr,
                flush=True,
            )
            with contextlib.suppress(KeyboardInterrupt):  # pressed again: stop now
                ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=STOP_GRACE)
                for ref in ready:
                    take(ref)
            for ref in list(pending):
                ray.cancel(ref, force=True)
            raise
        return cpu

    def close(self) -> None:
        """Disconnect; a Ray this cluster started is stopped."""
        if self.owns:
            import ray

            ray.shutdown()
            self.owns = False

    def __enter__(self) -> RayCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextlib.contextmanager
def ray_cluster(address: str | None, num_cpus: int | None = None) -> Iterator[RayCluster | None]:
    """The :class:`RayCluster` of ``--ray ADDRESS`` for the ``with`` block, or ``None`` without ``--ray``
    (``address`` ``None``): the deals then play in this machine's processes."""
    if address is None:
        yield None
        return
    with RayCluster(address, num_cpus) as cluster:
        yield cluster
