"""Speed benchmarks of the environments (``scopa bench``): the Python engine, the AEC env and the
compiled core, each measured against a fixed pure-Python reference loop in the same run.

* :mod:`~scopa_env.bench.env`: the engine and env rows, the reference loop;
* :mod:`~scopa_env.bench.fast`: the compiled core's rows, cold starts and thread scaling.
"""

from scopa_env.bench.env import bench_env, reference_rate

__all__ = ["bench_env", "reference_rate"]
